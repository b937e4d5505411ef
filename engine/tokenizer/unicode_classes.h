#pragma once
// The Unicode classes the split patterns of GPT-2, Llama 3 and Qwen2 use, and UTF-8 decoding into
// code points. The ranges come from unicode_classes.inc (generated, see its first line).
#include <cstdint>
#include <string_view>
#include <vector>

namespace attnlab {

bool isLetter(char32_t c);      // \p{L}
bool isNumber(char32_t c);      // \p{N}
bool isWhiteSpace(char32_t c);  // \s: the White_Space property

// One code point of a text and the byte range it occupies.
struct CodePoint {
  char32_t value;
  uint32_t offset;  // first byte
  uint32_t length;  // 1-4 bytes
};
// The code points of valid UTF-8 `text` (check with firstInvalidUtf8 first).
std::vector<CodePoint> decodeCodePoints(std::string_view text);
std::string encodeCodePoint(char32_t c);

}  // namespace attnlab
