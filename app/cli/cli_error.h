#pragma once
// A failure the user can act on. main() prints it as one line, "attnlab-cli: <what>", and exits
// with `code`.
#include <stdexcept>
#include <string>

namespace attnlab::cli {

constexpr int kExitUsage = 2;          // bad flags, unreadable files, invalid configs
constexpr int kExitDiverged = 3;       // training produced NaN/Inf
constexpr int kExitInterrupted = 130;  // stopped by Ctrl-C (128 + SIGINT), after saving

struct CliError : std::runtime_error {
  explicit CliError(const std::string& what, int exitCode = kExitUsage) : std::runtime_error(what), code(exitCode) {}
  int code;
};

}  // namespace attnlab::cli
