// tokenizer.json (tokenizer/tokenizer_files.h): parsed, built, and used on a fixed text both ways.
#include "fuzz_seeds.h"
#include "fuzz_support.h"
#include "tokenizer/tokenizer_files.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TokenizerSpec spec;
  if (!parseTokenizerJson(fuzz::bytesOf(data, size), "tokenizer.json", spec).empty()) return 0;
  fuzz::exercise(spec);
  return 0;
}
