#include "hf/hf_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "hf/hf_model.h"
#include "core/files.h"

namespace attnlab::hf {

namespace fs = std::filesystem;

std::string hfCacheRoot() {
  if (const char* hub = std::getenv("HF_HUB_CACHE"); hub && *hub) return hub;
  if (const char* home = std::getenv("HF_HOME"); home && *home) return (fs::path(home) / "hub").string();
  const char* user = std::getenv("HOME");
  return (fs::path(user ? user : "") / ".cache" / "huggingface" / "hub").string();
}

namespace {

// refs/main's snapshot when it exists, else the most recently written one.
std::string currentSnapshot(const fs::path& repo) {
  std::string ref;
  if (readWholeFile((repo / "refs" / "main").string(), ref).empty()) {
    ref.erase(std::remove_if(ref.begin(), ref.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }), ref.end());
    std::error_code ec;
    if (!ref.empty() && ref.find('/') == std::string::npos && fs::is_directory(repo / "snapshots" / ref, ec))
      return (repo / "snapshots" / ref).string();
  }
  std::error_code ec;
  fs::path best;
  fs::file_time_type bestTime{};
  for (const auto& e : fs::directory_iterator(repo / "snapshots", ec))
    if (e.is_directory(ec) && (best.empty() || e.last_write_time(ec) > bestTime)) {
      best = e.path();
      bestTime = e.last_write_time(ec);
    }
  return best.string();
}

uint64_t folderBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);  // follows the symlinks into blobs/
  return total;
}

}  // namespace

std::vector<CachedModel> scanHfCache(const std::string& root) {
  std::vector<CachedModel> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string folder = e.path().filename().string();
    if (!e.is_directory(ec) || folder.rfind("models--", 0) != 0) continue;
    CachedModel m;
    m.name = folder.substr(8);
    if (const auto sep = m.name.find("--"); sep != std::string::npos) m.name.replace(sep, 2, "/");
    m.path = currentSnapshot(e.path());
    if (m.path.empty()) {
      m.problem = "no snapshot";
    } else {
      m.bytes = folderBytes(m.path);
      HfModelInfo info;
      m.problem = readHfConfig(m.path, info);
      m.model_type = info.model_type;
      if (m.problem.empty()) m.parameters = info.parameters;
    }
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const CachedModel& a, const CachedModel& b) { return a.name < b.name; });
  return out;
}

}  // namespace attnlab::hf
