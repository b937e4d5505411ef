#pragma once
// The split regexes of byte-level BPE tokenizers, matched by hand (one pass, no backtracking
// engine): each returns the byte lengths of the consecutive matches that cover the text.
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/unicode_classes.h"

namespace attnlab {

enum class SplitPattern {
  Gpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Llama3,  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Qwen2,   // as Llama3 with \p{N} (one number per piece)
};

// The pattern a tokenizer.json regex string spells; false when it is none of the known ones.
bool splitPatternFromRegex(const std::string& regex, SplitPattern& out);
// Splits `text` (valid UTF-8) into the pattern's matches, appended to `pieces` as views into `text`.
void splitByPattern(SplitPattern pattern, std::string_view text, std::vector<std::string_view>& pieces);
// Splits every \p{N} code point into a piece of its own (the Digits pre-tokenizer, individual_digits).
void splitDigits(std::string_view text, std::vector<std::string_view>& pieces);

}  // namespace attnlab
