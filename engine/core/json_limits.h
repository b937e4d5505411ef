#pragma once
// Limits checked on a JSON text before it is parsed. No file the lab reads nests more than a few
// levels, while the parser's value tree and the printer that quotes a bad value in a message
// recurse once per level: a file nested 100,000 deep would overflow the stack.
#include <cstddef>
#include <string>
#include <string_view>

namespace attnlab {

constexpr int kMaxJsonDepth = 64;

// Returns "" or "JSON nested deeper than 64 levels (at byte N)". Brackets inside strings do not count.
std::string checkJsonDepth(std::string_view text, int maxDepth = kMaxJsonDepth);

}  // namespace attnlab
