#pragma once
// Unicode Normalization Form C (UAX #15), as Qwen2's tokenizer.json asks of its text ("NFC"
// normalizer): canonical decomposition (Hangul syllables by arithmetic), canonical ordering of
// combining marks, then canonical composition. Tables: unicode_normalization.inc (generated from
// the Unicode Character Database, see its first line).
#include <string>
#include <string_view>

namespace attnlab {

// `utf8` must be valid UTF-8 (firstInvalidUtf8 finds a bad byte); the result is NFC, in UTF-8.
std::string toNfc(std::string_view utf8);

// Canonical_Combining_Class of `c` (0 for starters).
int combiningClass(char32_t c);

}  // namespace attnlab
