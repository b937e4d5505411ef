// A checkpoint is a folder: config.json, model.safetensors, history.csv, optimizer.safetensors and
// training_state.json (docs/checkpoint-format.md).
// Saving builds the whole folder beside the target, flushes it to disk and swaps it in, so `dir` is
// always either the previous checkpoint or the new one, never a mix (swapIntoPlace).
#include "io/checkpoint.h"

#include <fcntl.h>
#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>

#include "hf/pretrained_copy.h"  // a checkpoint fine-tuned from a Hugging Face folder keeps its description
#include "io/checkpoint_corpus.h"
#include "io/checkpoint_tokenizer.h"
#include "io/config_json.h"
#include "core/available_memory.h"
#include "core/files.h"
#include "core/folder_links.h"
#include "io/qk_history_file.h"
#include "io/training_state.h"
#include "train/memory_estimate.h"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kConfigFile = "config.json";
constexpr const char* kWeightsFile = "model.safetensors";
constexpr const char* kHistoryFile = "history.csv";

// "runs/a/" and "runs/a" name the same folder; the trailing slash would break the sibling names.
fs::path folderPath(const std::string& dir) {
  fs::path p(dir);
  return p.has_filename() ? p : p.parent_path();
}

// Replacing must never delete something that is not ours: the target is either absent,
// an empty folder, or a folder holding a config.json.
std::string checkReplaceable(const fs::path& target) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(target, ec);
  if (!fs::exists(status)) return {};
  if (!fs::is_directory(status)) return target.string() + ": exists and is not a folder; refusing to replace it";
  if (fs::is_empty(target, ec) || fs::exists(target / kConfigFile, ec)) return {};
  return target.string() + ": exists and is not an attnlab checkpoint (no config.json); refusing to replace it";
}

// Beside the target `<folder>`: the new checkpoint being written, and (only where the file system
// cannot exchange two folders) the previous one moved aside for a moment.
constexpr const char* kFreshTag = ".tmp-";
constexpr const char* kAsideTag = ".old-";

// The siblings of `target` named `<folder><tag><random>`.
std::vector<fs::path> leftovers(const fs::path& target, const std::string& tag) {
  std::vector<fs::path> found;
  std::error_code ec;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + tag;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(prefix, 0) == 0) found.push_back(it->path());
  return found;
}

// Puts the complete new folder `fresh` at `target` in one step. Where the file system exchanges
// two names atomically (Linux renameat2), the target is at every moment the old or the new
// checkpoint and the old one ends up at `fresh`, deleted afterwards. Elsewhere the old one is
// moved aside first; a kill between the two renames leaves it at `<folder>.old-*`, which
// recoverInterruptedSave() puts back.
std::string swapIntoPlace(const fs::path& fresh, const fs::path& target) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(target, ec))) {
    if (::rename(fresh.c_str(), target.c_str()) == 0) return {};
    return target.string() + ": cannot move the new checkpoint into place (" + lastSystemError() + ")";
  }
  if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(fresh, ec);  // now the previous checkpoint; a leftover is removed by the next save
    return {};
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return target.string() + ": cannot exchange the new checkpoint with the previous one (" + lastSystemError() + ")";
  fs::path aside = target;
  aside += kAsideTag + randomTag();
  if (::rename(target.c_str(), aside.c_str()) != 0)
    return target.string() + ": cannot move the previous checkpoint aside (" + lastSystemError() + ")";
  if (::rename(fresh.c_str(), target.c_str()) != 0) {
    const std::string why = target.string() + ": cannot move the new checkpoint into place (" + lastSystemError() + ")";
    ::rename(aside.c_str(), target.c_str());  // put the previous one back
    return why;
  }
  fs::remove_all(aside, ec);
  return {};
}

std::string writeFolder(const fs::path& folder, const Trainer& trainer) {
  ExperimentConfig config = trainer.config();
  config.model.vocab = trainer.model().config().vocab;  // saved filled in, so loading needs no task
  if (!config.task.tokenizer.empty()) {  // fine-tuned from a Hugging Face folder: keep what describes it
    const fs::path copy = folder / hf::kPretrainedFolder;
    if (std::string why = hf::keepPretrainedDescription(config.task.tokenizer, copy.string()); !why.empty()) return why;
    config.task.tokenizer = hf::kPretrainedFolder;  // read back relative to the checkpoint (loadCheckpoint)
  }
  if (std::string why = keepCorpus(folder.string(), config); !why.empty()) return why;
  if (std::string why = writeFileAtomic((folder / kConfigFile).string(), configToJson(config)); !why.empty()) return why;
  if (std::string why = writeSafetensors((folder / kWeightsFile).string(), trainer.model().params()); !why.empty())
    return why;
  if (std::string why = writeHistoryCsv((folder / kHistoryFile).string(), trainer.history()); !why.empty()) return why;
  if (std::string why = writeCheckpointTokenizer(folder.string(), trainer); !why.empty()) return why;
  if (std::string why = writeTrainingState(folder.string(), trainer); !why.empty()) return why;
  if (std::string why = writeQkHistory(folder.string(), trainer); !why.empty()) return why;
  return syncFolder(folder.string());
}

// Tidies up after a save that was killed: puts back a previous checkpoint left moved aside (only
// on file systems without the exchange) and removes leftover temporary folders beside the target.
// Saving does it first; loading never does, as it may run while another process saves.
void recoverInterruptedSave(const std::string& dir) {
  const fs::path target = folderPath(dir);
  if (target.empty()) return;
  std::error_code ec;
  const std::vector<fs::path> aside = leftovers(target, kAsideTag);
  if (!fs::exists(fs::symlink_status(target, ec)) && !aside.empty()) fs::rename(aside.front(), target, ec);
  for (const std::string tag : {kFreshTag, kAsideTag})
    for (const fs::path& left : leftovers(target, tag)) fs::remove_all(left, ec);
}

}  // namespace

std::string saveCheckpoint(const std::string& dir, const Trainer& trainer) {
  const fs::path target = folderPath(dir);
  if (target.empty()) return "cannot save a checkpoint: no folder given";
  recoverInterruptedSave(target.string());
  if (std::string why = checkReplaceable(target); !why.empty()) return why;

  std::error_code ec;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) return parent.string() + ": cannot create the folder (" + ec.message() + ")";

  // Every failure names the folder, says why, and leaves the previous checkpoint as it was.
  const bool replacing = fs::exists(target, ec);
  const auto notSaved = [&](const std::string& why) {
    return target.string() + ": not saved (" + why + ")" + (replacing ? "; the checkpoint there is unchanged" : "");
  };
  fs::path fresh = target;
  fresh += kFreshTag + randomTag();
  if (!fs::create_directory(fresh, ec)) return notSaved("cannot create " + fresh.string() + ": " + ec.message());
  auto fail = [&](const std::string& why) {
    std::error_code ignored;
    fs::remove_all(fresh, ignored);
    return notSaved(why);
  };
  if (std::string why = writeFolder(fresh, trainer); !why.empty()) return fail(why);
  if (std::string why = syncFolder(parent.string()); !why.empty()) return fail(why);
  if (std::string why = swapIntoPlace(fresh, target); !why.empty()) return fail(why);
  return syncFolder(parent.string());
}

namespace {
std::string loadAdjusted(const std::string& dir, LoadedCheckpoint& out, const std::function<void(ExperimentConfig&)>& adjust);
}  // namespace

std::string loadCheckpoint(const std::string& dir, LoadedCheckpoint& out) { return loadCheckpointOnData(dir, "", out); }

std::string loadCheckpointOnData(const std::string& dir, const std::string& dataDir, LoadedCheckpoint& out) {
  return loadAdjusted(dir, out, [&](ExperimentConfig& config) {
    if (dataDir.empty()) return;
    TaskConfig data;
    data.name = "token_files", data.text_path = dataDir, data.tokenizer = config.task.tokenizer;
    config.task = data;
  });
}

std::string loadCheckpointOnText(const std::string& dir, const std::string& textFile, LoadedCheckpoint& out) {
  return loadAdjusted(dir, out, [&](ExperimentConfig& config) {
    if (config.task.name == "text") config.task.text_path = textFile;
  });
}

namespace {

// loadCheckpoint with `adjust` applied to the saved configuration before anything is built.
std::string loadAdjusted(const std::string& dir, LoadedCheckpoint& out, const std::function<void(ExperimentConfig&)>& adjust) {
  const fs::path folder = folderPath(dir);
  const std::string configPath = (folder / kConfigFile).string();
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return folder.string() + ": no such checkpoint folder";
  if (!fs::exists(folder / kConfigFile, ec)) return configPath + ": missing (not an attnlab checkpoint folder?)";
  if (std::string why = checkLinksStayInFolder(folder.string()); !why.empty()) return why;

  std::string text;
  if (std::string why = readWholeFile(configPath, text); !why.empty()) return why;
  ExperimentConfig config;
  if (std::string why = configFromJson(text, config); !why.empty()) return configPath + ": " + why;
  if (!config.task.tokenizer.empty() && fs::path(config.task.tokenizer).is_relative())
    config.task.tokenizer = (folder / config.task.tokenizer).lexically_normal().string();  // its own copy (writeFolder)
  findKeptCorpus(folder.string(), config);
  adjust(config);
  if (std::string why = validate(config); !why.empty()) return configPath + ": " + why;
  if (config.model.vocab <= 0) return configPath + ": model.vocab must be set in a saved checkpoint";
  // Checked from config.json alone, before a tensor is read: a folder claiming a huge model is refused here.
  InferenceEstimate need;
  if (std::string why = estimateInference(config.model, std::min(config.model.context, kOpeningTokens), true, need); !why.empty())
    return configPath + ": cannot build the model (" + why + ")";
  if (std::string why = inferenceMemoryRefusal("opening this checkpoint", need, availableMemoryBytes()); !why.empty())
    return configPath + ": " + why;

  std::unique_ptr<Model> model;
  try {
    model = std::make_unique<Model>(config.model, config.train.seed);
  } catch (const std::exception& e) {
    return configPath + ": cannot build the model (" + e.what() + ")";
  }
  if (std::string why = readSafetensors((folder / kWeightsFile).string(), model->params()); !why.empty()) return why;

  const std::string historyPath = (folder / kHistoryFile).string();
  std::vector<TrainPoint> history;
  if (std::string why = readHistoryCsv(historyPath, history); !why.empty()) return why;

  try {
    out.trainer = std::make_unique<Trainer>(config, std::move(model), std::move(history));
  } catch (const std::exception& e) {
    return configPath + ": cannot restore the experiment (" + e.what() + ")";
  }
  std::string why = checkCheckpointTokenizer(folder.string(), *out.trainer);
  if (why.empty()) why = readTrainingState(folder.string(), *out.trainer, out.notice);
  if (why.empty()) why = readQkHistory(folder.string(), *out.trainer);
  if (!why.empty()) {
    out.trainer.reset();
    return why;
  }
  out.config = std::move(config);
  return {};
}

}  // namespace

}  // namespace attnlab
