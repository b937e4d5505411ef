#pragma once
// The benchmark's workloads, defined once: attnlab-bench runs them and prints them as JSON for
// bench/torch_peer.py, which builds the same model from that description.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace attnlab::bench {

struct Workload {
  std::string name;
  std::string what;                     // one line for the table
  std::vector<std::string> overrides;  // applied to the "default" preset
};

const std::vector<Workload>& workloads();
// Returns "" and fills `config`, or a one-line reason (unknown workload, bad override).
std::string workloadConfig(const std::string& name, ExperimentConfig& config);
// Shapes and training settings the PyTorch peer needs. `seqLen` is the task's sequence length.
nlohmann::json describe(const std::string& name, const ExperimentConfig& config, int seqLen);

}  // namespace attnlab::bench
