#pragma once
// Everything that defines an experiment: the model's shape and parts, the task, and training.
// Serialised to config.json by io/config_json.h; validated by validate(), which asks every family
// (attention, positional encodings, tasks, ...) about its members, so it sits above them all.
#include <string>

#include "config/model_config.h"
#include "config/task_config.h"
#include "config/train_config.h"

namespace attnlab {

struct ExperimentConfig {
  std::string name = "default";
  std::string description;
  ModelConfig model;
  TaskConfig task;
  TrainConfig train;
};

// Returns "" when the configuration can be built, else one line saying what is wrong and why
// (checks shapes, registry names and each member's settings).
std::string validate(const ExperimentConfig& config);

}  // namespace attnlab
