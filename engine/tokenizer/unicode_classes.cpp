// Class membership by binary search over sorted, disjoint code point ranges; ASCII answers first.
#include "tokenizer/unicode_classes.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "core/utf8.h"

namespace attnlab {
namespace {

struct CodePointRange {
  char32_t first, last;
};

#include "tokenizer/unicode_classes.inc"

template <size_t N>
bool inRanges(const CodePointRange (&ranges)[N], char32_t c) {
  const auto it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                   [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != std::begin(ranges) && c <= std::prev(it)->last;
}

}  // namespace

bool isLetter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return inRanges(kLetterRanges, c);
}
bool isNumber(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return inRanges(kNumberRanges, c);
}
bool isWhiteSpace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return inRanges(kWhiteSpaceRanges, c);
}

std::vector<CodePoint> decodeCodePoints(std::string_view text) {
  std::vector<CodePoint> out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const int length = std::max(1, utf8CodePointLength(text, pos));
    const auto lead = static_cast<unsigned char>(text[pos]);
    char32_t value = length == 1 ? lead : lead & (0x7F >> length);
    for (int i = 1; i < length; ++i) value = (value << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
    out.push_back({value, static_cast<uint32_t>(pos), static_cast<uint32_t>(length)});
    pos += length;
  }
  return out;
}

std::string encodeCodePoint(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

}  // namespace attnlab
