// A sharded Hugging Face folder: the fuzzer writes model.safetensors.index.json beside a valid
// config.json and two valid shards, and the folder is read as opening a model reads it first.
#include "fuzz_seeds.h"
#include "fuzz_support.h"
#include "hf/hf_model.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = [] {
    const auto folder = fuzz::scratch() / "sharded";
    fuzz::writeShardedFolder(folder);
    return folder;
  }();
  fuzz::writeFile(dir / "model.safetensors.index.json", fuzz::bytesOf(data, size));
  hf::HfModelInfo info;
  hf::readHfInfo(dir.string(), info);
  return 0;
}
