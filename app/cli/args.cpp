#include "args.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "cli_error.h"

namespace attnlab::cli {

namespace {

const FlagSpec* findSpec(const std::vector<FlagSpec>& specs, const std::string& name) {
  for (const auto& spec : specs)
    if (spec.name == name) return &spec;
  return nullptr;
}

template <class T>
bool parseWhole(const std::string& s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

template <class T>
std::string rangeText(T min, T max) {
  std::ostringstream out;
  out << "[" << min << ", " << max << "]";
  return out.str();
}

}  // namespace

Args::Args(const std::vector<std::string>& arguments, const std::vector<FlagSpec>& specs) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& arg = arguments[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      throw CliError("unexpected argument '" + arg + "' (flags start with --)");
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const FlagSpec* spec = findSpec(specs, name);
    if (!spec) throw CliError("unknown flag --" + name);
    if (has(name) && !spec->repeatable) throw CliError("--" + name + " is given twice");

    std::string value;
    if (spec->valueName.empty()) {
      if (eq != std::string::npos) throw CliError("--" + name + " takes no value");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < arguments.size()) {
      value = arguments[++i];
    } else {
      throw CliError("--" + name + " needs a value (" + spec->valueName + ")");
    }
    values_[name].push_back(value);
  }
}

std::string Args::text(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? fallback : it->second.front();
}

std::string Args::required(const std::string& flag) const {
  if (!has(flag)) throw CliError("--" + flag + " is required");
  return text(flag);
}

std::vector<std::string> Args::all(const std::string& flag) const {
  auto it = values_.find(flag);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

long long Args::integer(const std::string& flag, long long fallback, long long min, long long max) const {
  if (!has(flag)) return fallback;
  const std::string s = text(flag);
  long long v = 0;
  if (!parseWhole(s, v) || v < min || v > max)
    throw CliError("--" + flag + " must be a whole number in " + rangeText(min, max) + ", got '" + s + "'");
  return v;
}

double Args::number(const std::string& flag, double fallback, double min, double max) const {
  if (!has(flag)) return fallback;
  const std::string s = text(flag);
  double v = 0;
  if (!parseWhole(s, v) || !std::isfinite(v) || v < min || v > max)
    throw CliError("--" + flag + " must be a number in " + rangeText(min, max) + ", got '" + s + "'");
  return v;
}

}  // namespace attnlab::cli
