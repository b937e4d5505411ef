#include "core/settings.h"

#include <cmath>
#include <sstream>

namespace attnlab {

double settingOr(const Settings& s, const SettingSpec& spec) {
  auto it = s.find(spec.key);
  return it == s.end() ? spec.defaultValue : it->second;
}

std::string validateSettings(const Settings& s, const std::vector<SettingSpec>& specs, const std::string& owner) {
  for (const auto& spec : specs) {
    auto it = s.find(spec.key);
    if (it == s.end()) continue;
    const double v = it->second;
    std::ostringstream why;
    if (!std::isfinite(v)) {
      why << owner << ": " << spec.key << " must be a finite number";
      return why.str();
    }
    if (v < spec.min || v > spec.max) {
      why << owner << ": " << spec.key << " = " << v << " is outside [" << spec.min << ", " << spec.max << "]";
      return why.str();
    }
    if (spec.integer && v != std::floor(v)) {
      why << owner << ": " << spec.key << " must be a whole number, got " << v;
      return why.str();
    }
  }
  return {};
}

}  // namespace attnlab
