#pragma once
// What a tokenizer's files say, read into one plain structure (tokenizer_files.cpp): the kind, the
// vocabulary and merges, the added tokens, the pre-tokenizer steps and the special ids.
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/split_pattern.h"

namespace attnlab {

struct AddedToken {
  int id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;  // the match also swallows the whitespace before it
  bool rstrip = false;  // ... and after it
};

// One splitting step before the byte-level BPE, in order.
struct PreTokenizeStep {
  enum class Kind { Pattern, Digits } kind = Kind::Pattern;
  SplitPattern pattern = SplitPattern::Gpt2;
};

enum class PrependScheme { Never, First, Always };

struct TokenizerSpec {
  std::string kind;    // TokenizerRegistry name: "byte_level_bpe" or "sentencepiece_bpe"
  std::string source;  // the file it came from, for messages
  std::vector<std::string> vocab;  // token by id; "" where an id has none
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<AddedToken> added;
  bool nfc = false;  // the normalizer puts each ordinary segment in Unicode NFC first (Qwen2)

  // byte_level_bpe
  std::vector<PreTokenizeStep> steps;
  bool ignoreMerges = false;  // a piece that is itself a token is not merged (Llama 3)

  // sentencepiece_bpe: spaces become ▁ (U+2581), ▁ is prepended per `prepend`
  PrependScheme prepend = PrependScheme::Always;
  bool prependIfMissing = false;  // the Metaspace pre-tokenizer prepends only when ▁ is not first already
  bool splitOnMetaspace = false;  // each ▁ starts a new piece
  bool byteFallback = false;      // a character without a token becomes <0xNN> byte tokens
  std::string unk;                // the unknown token, "" for none
  bool fuseUnk = false;           // consecutive unknowns become one

  // Specials: what the model expects, and what encode(addSpecial) puts around the text.
  int bos = -1;
  int eos = -1;
  std::vector<int> prefix;
  std::vector<int> suffix;
};

}  // namespace attnlab
