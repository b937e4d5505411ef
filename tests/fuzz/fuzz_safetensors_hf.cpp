// Hugging Face safetensors (hf/tensor_file.h): the header of any file, then every small tensor's
// values converted to float32 as opening a model does.
#include <vector>

#include "fuzz_support.h"
#include "hf/tensor_file.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = fuzz::scratch() / "model.safetensors";
  fuzz::writeFile(file, fuzz::bytesOf(data, size));
  std::vector<hf::TensorEntry> entries;
  if (!hf::readTensorHeader(file.string(), entries).empty()) return 0;
  for (const hf::TensorEntry& e : entries) {
    if (e.elements() > (1u << 16)) continue;  // the header was checked against the file: the bytes exist
    std::vector<float> values(e.elements());
    hf::readTensorFloats(e, values.data());
  }
  return 0;
}
