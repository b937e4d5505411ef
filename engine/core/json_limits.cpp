#include "core/json_limits.h"

namespace attnlab {

std::string checkJsonDepth(std::string_view text, int maxDepth) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return "JSON nested deeper than " + std::to_string(maxDepth) + " levels (at byte " + std::to_string(i) + ")";
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return {};
}

}  // namespace attnlab
