#include "positional/length_limit.h"

#include <algorithm>
#include <vector>

#include "positional/positional.h"

namespace attnlab {
namespace {
std::vector<std::string>& positionLimited() {
  static std::vector<std::string> names;  // filled by static initialisers, read after main starts
  return names;
}
bool isPositionLimited(const std::string& name) {
  const auto& names = positionLimited();
  return std::find(names.begin(), names.end(), name) != names.end();
}
}  // namespace

bool declarePositionLimited(const std::string& name) {
  positionLimited().push_back(name);
  return true;
}

std::string lengthRefusal(const ModelConfig& config, int T) {
  if (T <= config.context || !isPositionLimited(config.positional)) return {};
  std::string extrapolating;
  for (const auto& e : PositionalRegistry::instance().entries())
    if (!isPositionLimited(e.name)) extrapolating += (extrapolating.empty() ? "" : ", ") + e.name;
  return "a sequence of " + std::to_string(T) + " tokens is longer than the context of " + std::to_string(config.context) +
         ", and " + config.positional + " positions exist only for the trained positions (encodings that extrapolate: " +
         extrapolating + ")";
}

}  // namespace attnlab
