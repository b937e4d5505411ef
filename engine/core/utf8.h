#pragma once
// Strict UTF-8 decoding: overlong forms, surrogates and code points above U+10FFFF are invalid.
#include <cstddef>
#include <string>
#include <string_view>

namespace attnlab {

// Byte length (1-4) of the valid code point starting at text[pos], or 0 when there is none.
int utf8CodePointLength(std::string_view text, size_t pos);
// Offset of the first byte that does not start a valid code point; npos when all is valid.
size_t firstInvalidUtf8(std::string_view text);
// A token made printable for one-line messages: control characters become \n, \t, \xNN.
std::string printableToken(std::string_view token);

}  // namespace attnlab
