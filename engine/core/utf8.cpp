#include "core/utf8.h"

#include <cstdint>
#include <cstdio>

namespace attnlab {

int utf8CodePointLength(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  int length = 0;
  uint32_t codePoint = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    codePoint = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    codePoint = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    codePoint = lead & 0x07;
  } else {
    return 0;  // a continuation byte or 0xF8..0xFF cannot start a code point
  }
  if (pos + length > text.size()) return 0;
  for (int k = 1; k < length; ++k) {
    if ((byte(pos + k) & 0xC0) != 0x80) return 0;
    codePoint = (codePoint << 6) | (byte(pos + k) & 0x3F);
  }
  static constexpr uint32_t kSmallestOfLength[5] = {0, 0, 0x80, 0x800, 0x10000};
  const bool overlong = codePoint < kSmallestOfLength[length];
  const bool surrogate = codePoint >= 0xD800 && codePoint <= 0xDFFF;
  return overlong || surrogate || codePoint > 0x10FFFF ? 0 : length;
}

size_t firstInvalidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const int length = utf8CodePointLength(text, pos);
    if (length == 0) return pos;
    pos += length;
  }
  return std::string_view::npos;
}

std::string printableToken(std::string_view token) {
  std::string out;
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace attnlab
