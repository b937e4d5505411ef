// The lab's config.json (io/config_json.h): parsed, validated, and written back.
#include "fuzz_support.h"
#include "io/config_json.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ExperimentConfig config;
  if (configFromJson(fuzz::bytesOf(data, size), config).empty()) configToJson(config);
  return 0;
}
