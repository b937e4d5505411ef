#include "io/checkpoint_corpus.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "io/config_json.h"
#include "core/files.h"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCorpusFile = "corpus.txt";

bool keepsCorpus(const TaskConfig& task) { return task.name == "text" && !task.text_path.empty(); }

std::string flush(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  const std::string why = synced ? "" : file.string() + ": cannot flush to disk (" + lastSystemError() + ")";
  if (fd >= 0) ::close(fd);
  return why;
}

}  // namespace

std::string keepCorpus(const std::string& folder, ExperimentConfig& config) {
  if (!keepsCorpus(config.task)) return {};
  const fs::path copy = fs::path(folder) / kCorpusFile;
  std::error_code ec;
  fs::copy_file(config.task.text_path, copy, fs::copy_options::overwrite_existing, ec);
  if (ec) return copy.string() + ": cannot copy the text file " + config.task.text_path + " (" + ec.message() + ")";
  if (std::string why = flush(copy); !why.empty()) return why;
  config.task.text_path = kCorpusFile;
  return {};
}

std::string missingCorpus(const std::string& dir) {
  std::string text;
  ExperimentConfig config;
  if (!readWholeFile((fs::path(dir) / "config.json").string(), text).empty() || !configFromJson(text, config).empty()) return {};
  findKeptCorpus(dir, config);
  std::error_code ec;
  return keepsCorpus(config.task) && !fs::exists(config.task.text_path, ec) ? config.task.text_path : std::string();
}

void findKeptCorpus(const std::string& folder, ExperimentConfig& config) {
  if (keepsCorpus(config.task) && fs::path(config.task.text_path).is_relative())
    config.task.text_path = (fs::path(folder) / config.task.text_path).lexically_normal().string();
}

}  // namespace attnlab
