#pragma once
// A tiny parser for one command's flags: "--name value", "--name=value" and "--switch".
// Every flag must be declared; anything else is an error naming the offending argument.
#include <map>
#include <string>
#include <vector>

namespace attnlab::cli {

struct FlagSpec {
  std::string name;       // without the leading dashes
  std::string valueName;  // shown in help, e.g. "N"; empty for a switch that takes no value
  std::string help;
  bool repeatable = false;
};

class Args {
 public:
  // Throws CliError on an unknown flag, a missing value, a repeated flag or a stray argument.
  Args(const std::vector<std::string>& arguments, const std::vector<FlagSpec>& specs);

  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  std::string text(const std::string& flag, const std::string& fallback = "") const;
  std::string required(const std::string& flag) const;  // throws CliError when absent
  std::vector<std::string> all(const std::string& flag) const;
  // Throws CliError unless the value is a whole number / finite number in [min, max].
  long long integer(const std::string& flag, long long fallback, long long min, long long max) const;
  double number(const std::string& flag, double fallback, double min, double max) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace attnlab::cli
