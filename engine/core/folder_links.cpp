#include "core/folder_links.h"

#include <algorithm>
#include <filesystem>

namespace attnlab {
namespace {

namespace fs = std::filesystem;

bool isInside(const fs::path& root, const fs::path& path) {
  return std::mismatch(root.begin(), root.end(), path.begin(), path.end()).first == root.end();
}

}  // namespace

std::string checkLinksStayInFolder(const std::string& dir) {
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return {};  // no such folder: the caller says so
  const bool snapshot = root.parent_path().filename() == "snapshots";
  const fs::path blobs = root.parent_path().parent_path() / "blobs";
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    if (!entry.is_symlink(ec)) continue;
    const fs::path target = fs::canonical(entry.path(), ec);
    if (ec) continue;
    if (isInside(root, target) || (snapshot && isInside(blobs, target))) continue;
    return entry.path().string() + ": a symbolic link to " + target.string() + ", outside the folder (refused)";
  }
  return {};
}

}  // namespace attnlab
