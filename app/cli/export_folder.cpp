#include "export_folder.h"

#include <filesystem>
#include <system_error>

#include "cli_error.h"

namespace attnlab::cli {

void prepareOutputFolder(const std::string& dir, const std::string& marker, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw CliError(dir + ": exists and is not a folder");
    if (!fs::is_empty(dir, ec) && !fs::exists(fs::path(dir) / marker, ec))
      throw CliError(dir + ": exists and is not " + what + " (no " + marker + "); refusing to write into it");
  }
  fs::create_directories(dir, ec);
  if (ec) throw CliError(dir + ": cannot create the folder (" + ec.message() + ")");
}

}  // namespace attnlab::cli
