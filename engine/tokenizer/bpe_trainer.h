#pragma once
// Learning a byte-level BPE from a text, as GPT-2's tokenizer was learned: the text is split by
// GPT-2's pattern, and the most frequent adjacent pair of tokens is merged into a new token until
// the vocabulary has the asked size (or no pair occurs twice).
#include <string>
#include <string_view>

#include "tokenizer/tokenizer_spec.h"

namespace attnlab {

constexpr int kByteTokens = 256;

// Fills `spec` (kind byte_level_bpe, 256 byte tokens then one per merge). `vocabSize` is at least
// 257. Returns "" or a one-line reason (invalid UTF-8, a size out of range). Deterministic.
std::string learnByteLevelBpe(std::string_view text, int vocabSize, TokenizerSpec& spec);

}  // namespace attnlab

namespace attnlab {

class Vocabulary;
// A subword vocabulary of a byte-level BPE learned from `text`; "" or a one-line reason.
std::string learnSubwordVocabulary(std::string_view text, int vocabSize, Vocabulary& out);

}  // namespace attnlab
