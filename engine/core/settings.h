#pragma once
// Numeric settings of a registry member (window size, temperature, theta...), declared with
// defaults and ranges so that the CLI, config files and the UI can all validate them the same way.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnlab {

using Settings = std::map<std::string, double>;

struct SettingSpec {
  std::string key;
  double defaultValue = 0.0;
  double min = 0.0;
  double max = 0.0;
  bool integer = false;
  std::string help;
};

// Returns the value of `spec.key` in `s`, or its default.
double settingOr(const Settings& s, const SettingSpec& spec);
// Checks each key of `s` that one of `specs` declares (unknown keys are left for others to check).
// Returns an empty string when all are valid, else a one-line reason.
std::string validateSettings(const Settings& s, const std::vector<SettingSpec>& specs, const std::string& owner);

}  // namespace attnlab
