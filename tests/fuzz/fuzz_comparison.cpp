// A comparison file (.attnlab-compare, io/comparison_file.h): read, and written back when valid.
#include "fuzz_support.h"
#include "io/comparison_file.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ComparisonDocument document;
  if (comparisonFromJson(fuzz::bytesOf(data, size), document).empty()) comparisonToJson(document);
  return 0;
}
