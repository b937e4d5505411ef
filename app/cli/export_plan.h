#pragma once
// 'export pytorch --scale': what a scaled-up version of an experiment would need before anything runs.
#include <string>

#include "experiment/experiment_config.h"

namespace attnlab::cli {

struct ScaleRequest {
  std::string assignments;       // "d_model=768,n_layers=12,...": model keys, or section.key for others
  int devices = 1;               // processes (GPUs or CPU processes) sharing each step's batch
  double tokensPerSecond = 0;    // measured or assumed throughput of the whole run; 0: not stated
  bool fsdp = false;             // parameters, gradients and AdamW moments sharded over the devices
};

// The plan as printable lines: parameters, memory per device, FLOPs per token, time at the stated
// throughput. Throws CliError on a bad assignment or an experiment that cannot be built.
std::string scalePlan(ExperimentConfig config, const ScaleRequest& request);

}  // namespace attnlab::cli
