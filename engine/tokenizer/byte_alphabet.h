#pragma once
// GPT-2's byte alphabet: each byte is spelled by one printable code point, so that byte-level
// tokens are readable strings in vocab.json. Printable Latin-1 bytes stand for themselves; the
// other 68 (controls, space, NBSP, soft hyphen) take U+0100 onwards in byte order (space is Ġ).
#include <string>
#include <string_view>

namespace attnlab {

char32_t byteToCodePoint(unsigned char byte);
// Bytes spelled in the alphabet, and back. Code points outside the alphabet are kept as UTF-8.
std::string toByteAlphabet(std::string_view bytes);
std::string fromByteAlphabet(std::string_view spelled);

}  // namespace attnlab
