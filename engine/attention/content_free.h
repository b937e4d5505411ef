#pragma once
// Content-free attention variants (a static map, no mixing) read neither queries nor keys, so W_q
// and W_k get exactly zero gradient. Such a variant says so from its own file with
//   static const bool contentFree = declareContentFree("static_map");
// (a declaration beside the registry, as positional/length_limit.h's, so that asking needs no instance).
#include <algorithm>
#include <string>
#include <vector>

namespace attnlab {

inline std::vector<std::string>& contentFreeVariants() {
  static std::vector<std::string> names;  // filled by static initialisers, read after main starts
  return names;
}

// Marks the registered variant `name` as content-free. Returns true.
inline bool declareContentFree(const std::string& name) {
  contentFreeVariants().push_back(name);
  return true;
}

inline bool isContentFree(const std::string& name) {
  const auto& names = contentFreeVariants();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace attnlab
