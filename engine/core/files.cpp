#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>


namespace attnlab {

std::string lastSystemError() { return std::error_code(errno, std::generic_category()).message(); }

std::string readWholeFile(const std::string& path, std::string& bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return path + ": not a regular file";
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxWholeFileBytes)
    return path + ": " + std::to_string(size) + " bytes is more than the " + std::to_string(kMaxWholeFileBytes >> 20) +
           " MiB this lab reads from such a file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot read (" + lastSystemError() + ")";
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return path + ": cannot read (" + lastSystemError() + ")";
  bytes = std::move(content).str();
  return {};
}

std::string randomTag() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  const char* digits = "0123456789abcdef";
  std::string tag(8, '0');
  for (char& c : tag) c = digits[gen() % 16];
  return tag;
}

std::string syncFolder(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return dir + ": cannot open the folder to sync it (" + lastSystemError() + ")";
  const bool ok = ::fsync(fd) == 0;
  const std::string why = ok ? "" : lastSystemError();
  ::close(fd);
  return ok ? "" : dir + ": cannot sync the folder (" + why + ")";
}

namespace {

bool writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string writeFileAtomic(const std::string& path, const std::string& bytes) {
  const std::filesystem::path target(path);
  std::filesystem::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  // Same folder, so the final rename never crosses file systems and is atomic.
  const std::filesystem::path temp = folder / ("." + target.filename().string() + ".tmp-" + randomTag());

  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return path + ": cannot create a temporary file beside it (" + lastSystemError() + ")";
  std::string why;
  if (!writeAll(fd, bytes)) why = "cannot write (" + lastSystemError() + ")";
  else if (::fsync(fd) != 0) why = "cannot flush to disk (" + lastSystemError() + ")";
  if (::close(fd) != 0 && why.empty()) why = "cannot close (" + lastSystemError() + ")";
  if (why.empty() && ::rename(temp.c_str(), target.c_str()) != 0)
    why = "cannot move the new file into place (" + lastSystemError() + ")";
  if (!why.empty()) {
    ::unlink(temp.c_str());
    return path + ": " + why;
  }
  return syncFolder(folder.string());
}

}  // namespace attnlab
