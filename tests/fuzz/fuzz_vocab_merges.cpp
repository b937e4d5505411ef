// vocab.json + merges.txt (GPT-2's pair of files): the input is both, split at its first NUL byte.
#include "fuzz_seeds.h"
#include "fuzz_support.h"
#include "tokenizer/tokenizer_files.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes = fuzz::bytesOf(data, size);
  const size_t split = bytes.find('\0');
  const std::string vocab = bytes.substr(0, split);
  const std::string merges = split == std::string::npos ? "" : bytes.substr(split + 1);
  TokenizerSpec spec;
  if (!parseVocabAndMerges(vocab, merges, "vocab.json", spec).empty()) return 0;
  fuzz::exercise(spec);
  return 0;
}
