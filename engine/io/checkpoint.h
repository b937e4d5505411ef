#pragma once
// A saved experiment is a folder: config.json, model.safetensors, history.csv, and the state that
// continuing exactly needs, optimizer.safetensors and training_state.json (io/training_state.h).
// Saves are atomic (written beside, then renamed). Loading validates every name, shape and dtype
// and reports precisely what is wrong; it never crashes on bad input.
#include <memory>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"
#include "core/files.h"  // writeFileAtomic, which every checkpoint writer uses
#include "core/params.h"
#include "train/trainer.h"

namespace attnlab {

// Returns "" on success, else a one-line reason. The folder is replaced as a whole or not at all.
std::string saveCheckpoint(const std::string& dir, const Trainer& trainer);

struct LoadedCheckpoint {
  ExperimentConfig config;
  std::unique_ptr<Trainer> trainer;  // model weights, history, optimiser and data stream restored
  // Non-empty for a checkpoint saved without optimiser state: says that training on restarts it.
  std::string notice;
};
// Returns "" on success, else a one-line reason naming the file and what is wrong.
std::string loadCheckpoint(const std::string& dir, LoadedCheckpoint& out);
// loadCheckpoint with the task replaced by the data folder `dataDir` (task token_files, attnlab-cli
// data's format; the checkpoint's tokenizer kept): a run evaluated on data it does not name, e.g. a
// PyTorch-exported run whose data folder moved.
std::string loadCheckpointOnData(const std::string& dir, const std::string& dataDir, LoadedCheckpoint& out);

// Lower-level pieces, also used by tests.
std::string writeSafetensors(const std::string& path, const ParamStore& params);
// Reads into `params`, which must already hold every expected name with its shape.
std::string readSafetensors(const std::string& path, ParamStore& params);
std::string writeHistoryCsv(const std::string& path, const std::vector<TrainPoint>& history);
std::string readHistoryCsv(const std::string& path, std::vector<TrainPoint>& history);

}  // namespace attnlab
