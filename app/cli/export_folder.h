#pragma once
// Output folders of 'export' and 'data': created when missing; an existing one is reused only when
// it is empty or holds `marker` (an earlier export or data folder), never anything else.
#include <string>

namespace attnlab::cli {

// Throws CliError with a one-line reason.
void prepareOutputFolder(const std::string& dir, const std::string& marker, const std::string& what);

}  // namespace attnlab::cli
