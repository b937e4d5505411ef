#include "hf/pretrained_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/files.h"

namespace attnlab::hf {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTensorList = "tensors.json";
constexpr const char* kTokenizerFiles[] = {"tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt",
                                           "special_tokens_map.json", "generation_config.json", "tokenizer.model"};

// The copy is flushed to disk, as every file of a checkpoint is before the save swaps it in.
std::string copyOne(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::equivalent(from, to, ec)) return {};
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return to.string() + ": cannot copy from " + from.string() + " (" + ec.message() + ")";
  const int fd = ::open(to.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  const std::string why = synced ? "" : lastSystemError();
  if (fd >= 0) ::close(fd);
  return synced ? std::string() : to.string() + ": cannot flush the copy to disk (" + why + ")";
}

std::string readTensorList(const std::string& dir, HfModelInfo& info) {
  const std::string path = (fs::path(dir) / kTensorList).string();
  std::string text;
  if (std::string why = readWholeFile(path, text); !why.empty()) return why;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    info.dtype = j.at("dtype").get<std::string>();
    info.file_bytes = j.at("file_bytes").get<uint64_t>();
    info.tensor_names.clear();
    for (const auto& name : j.at("names")) info.tensor_names.insert(name.get<std::string>());
  } catch (const std::exception& e) {
    return path + ": not a list of the source's tensors (" + e.what() + ")";
  }
  return {};
}

}  // namespace

std::string copyDescriptionFiles(const std::string& fromDir, const std::string& toDir) {
  std::error_code ec;
  const fs::path from(fromDir), to(toDir);
  if (!fs::is_regular_file(from / "config.json", ec)) return (from / "config.json").string() + ": missing (the model's folder moved or changed?)";
  fs::create_directories(to, ec);
  if (ec) return toDir + ": cannot create (" + ec.message() + ")";
  if (std::string why = copyOne(from / "config.json", to / "config.json"); !why.empty()) return why;
  for (const char* name : kTokenizerFiles)
    if (fs::is_regular_file(from / name, ec))
      if (std::string why = copyOne(from / name, to / name); !why.empty()) return why;
  return {};
}

std::string keepPretrainedDescription(const std::string& fromDir, const std::string& toDir) {
  HfModelInfo info;
  if (std::string why = readPretrainedDescription(fromDir, info); !why.empty()) return why;
  if (std::string why = copyDescriptionFiles(fromDir, toDir); !why.empty()) return why;
  const nlohmann::json list = {{"dtype", info.dtype}, {"file_bytes", info.file_bytes}, {"names", info.tensor_names}};
  return writeFileAtomic((fs::path(toDir) / kTensorList).string(), list.dump(1));
}

std::string readPretrainedDescription(const std::string& dir, HfModelInfo& info) {
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / kTensorList, ec)) return readHfInfo(dir, info);
  if (std::string why = readHfConfig(dir, info); !why.empty()) return why;
  return readTensorList(dir, info);
}

}  // namespace attnlab::hf
