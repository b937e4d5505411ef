// A checkpoint is a folder: config.json, model.safetensors, history.csv, optimizer.safetensors and
// training_state.json (docs/checkpoint-format.md).
// Saving builds the whole folder beside the target and swaps it in with renames, so `dir` is
// always either the previous checkpoint or the new one, never a mix.
#include "io/checkpoint.h"

#include <filesystem>

#include "hf/pretrained_copy.h"  // a checkpoint fine-tuned from a Hugging Face folder keeps its description
#include "io/checkpoint_tokenizer.h"
#include "io/config_json.h"
#include "io/files.h"
#include "io/folder_links.h"
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

std::string writeFolder(const fs::path& folder, const Trainer& trainer) {
  ExperimentConfig config = trainer.config();
  config.model.vocab = trainer.model().config().vocab;  // saved filled in, so loading needs no task
  if (!config.task.tokenizer.empty()) {  // fine-tuned from a Hugging Face folder: keep what describes it
    const fs::path copy = folder / hf::kPretrainedFolder;
    if (std::string why = hf::keepPretrainedDescription(config.task.tokenizer, copy.string()); !why.empty()) return why;
    config.task.tokenizer = hf::kPretrainedFolder;  // read back relative to the checkpoint (loadCheckpoint)
  }
  if (std::string why = writeFileAtomic((folder / kConfigFile).string(), configToJson(config)); !why.empty()) return why;
  if (std::string why = writeSafetensors((folder / kWeightsFile).string(), trainer.model().params()); !why.empty())
    return why;
  if (std::string why = writeHistoryCsv((folder / kHistoryFile).string(), trainer.history()); !why.empty()) return why;
  if (std::string why = writeCheckpointTokenizer(folder.string(), trainer); !why.empty()) return why;
  if (std::string why = writeTrainingState(folder.string(), trainer); !why.empty()) return why;
  if (std::string why = writeQkHistory(folder.string(), trainer); !why.empty()) return why;
  return syncFolder(folder.string());
}

}  // namespace

std::string saveCheckpoint(const std::string& dir, const Trainer& trainer) {
  const fs::path target = folderPath(dir);
  if (target.empty()) return "cannot save a checkpoint: no folder given";
  if (std::string why = checkReplaceable(target); !why.empty()) return why;

  std::error_code ec;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) return parent.string() + ": cannot create the folder (" + ec.message() + ")";

  fs::path fresh = target;
  fresh += ".tmp-" + randomTag();
  if (!fs::create_directory(fresh, ec)) return fresh.string() + ": cannot create (" + ec.message() + ")";
  auto fail = [&](const std::string& why) {
    fs::remove_all(fresh, ec);
    return why;
  };
  if (std::string why = writeFolder(fresh, trainer); !why.empty()) return fail(why);

  fs::path old;
  if (fs::exists(target, ec)) {
    old = target;
    old += ".old-" + randomTag();
    fs::rename(target, old, ec);
    if (ec) return fail(target.string() + ": cannot move the previous checkpoint aside (" + ec.message() + ")");
  }
  fs::rename(fresh, target, ec);
  if (ec) {
    const std::string why = target.string() + ": cannot move the new checkpoint into place (" + ec.message() + ")";
    if (!old.empty()) fs::rename(old, target, ec);  // put the previous one back
    return fail(why);
  }
  if (!old.empty()) fs::remove_all(old, ec);  // the new checkpoint is in place; a leftover is only clutter
  return syncFolder(parent.string());
}

std::string loadCheckpoint(const std::string& dir, LoadedCheckpoint& out) { return loadCheckpointOnData(dir, "", out); }

std::string loadCheckpointOnData(const std::string& dir, const std::string& dataDir, LoadedCheckpoint& out) {
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
  if (!dataDir.empty()) {
    TaskConfig data;
    data.name = "token_files", data.text_path = dataDir, data.tokenizer = config.task.tokenizer;
    config.task = data;
  }
  if (std::string why = validate(config); !why.empty()) return configPath + ": " + why;
  if (config.model.vocab <= 0) return configPath + ": model.vocab must be set in a saved checkpoint";
  if (std::string why = checkFitsInMemory(config.model); !why.empty()) return configPath + ": " + why;

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

}  // namespace attnlab
