#include "tokenizer/byte_alphabet.h"

#include <array>

#include "tokenizer/unicode_classes.h"

namespace attnlab {
namespace {

bool printsAsItself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

const std::array<char32_t, 256>& alphabet() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) t[b] = printsAsItself(b) ? static_cast<char32_t>(b) : next++;
    return t;
  }();
  return table;
}

constexpr int kShifted = 68;  // bytes that do not print as themselves

// The bytes spelled U+0100, U+0101, ... in order.
const std::array<unsigned char, kShifted>& shiftedBytes() {
  static const std::array<unsigned char, kShifted> table = [] {
    std::array<unsigned char, kShifted> t{};
    int n = 0;
    for (int b = 0; b < 256; ++b)
      if (!printsAsItself(b)) t[n++] = static_cast<unsigned char>(b);
    return t;
  }();
  return table;
}

}  // namespace

char32_t byteToCodePoint(unsigned char byte) { return alphabet()[byte]; }

std::string toByteAlphabet(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += encodeCodePoint(byteToCodePoint(static_cast<unsigned char>(c)));
  return out;
}

std::string fromByteAlphabet(std::string_view spelled) {
  std::string out;
  for (const CodePoint& cp : decodeCodePoints(spelled)) {
    const char32_t c = cp.value;
    if (c < 0x100 && printsAsItself(static_cast<int>(c))) out += static_cast<char>(c);
    else if (c >= 0x100 && c < 0x100 + kShifted) out += static_cast<char>(shiftedBytes()[c - 0x100]);
    else out.append(spelled.substr(cp.offset, cp.length));
  }
  return out;
}

}  // namespace attnlab
