// The lab's own safetensors reader (io/checkpoint.h readSafetensors), as opening a saved experiment
// uses it: the expected parameters are known, every entry is checked against them and the file.
#include "fuzz_seeds.h"
#include "fuzz_support.h"
#include "io/checkpoint.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = fuzz::scratch() / "model.safetensors";
  fuzz::writeFile(file, fuzz::bytesOf(data, size));
  ParamStore params = fuzz::labParams();
  readSafetensors(file.string(), params);
  return 0;
}
