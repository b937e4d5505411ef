#pragma once
// An analysis turns a trained model into numbers the views and the CLI show (CATALOGUE section 5).
// Each analysis lives in its own file: typed functions and plain result structs (for tests and
// views), plus one registered Analysis that runs them on a loaded experiment and reports JSON.
//   ATTNLAB_REGISTER(AnalysisRegistry, "qk_spectrum", "one line", [] { return std::make_unique<...>(); });
// `attnlab-cli analyze` runs every registered analysis (or those named with --only).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/registry.h"
#include "data/task.h"
#include "train/trainer.h"

namespace attnlab {

using Json = nlohmann::ordered_json;

struct AnalysisOptions {
  int layer = -1;       // -1: every layer (the embedding, which needs one head, takes layer 0)
  int head = -1;        // -1: every head (the embedding takes head 0)
  int batches = 4;      // validation batches for importance and diagnostics
  uint64_t seed = 1;    // for the validation sample, the random baselines and the Ginibre draw
};

class Analysis {
 public:
  virtual ~Analysis() = default;
  // May set and clear the model's head gains; leaves the weights unchanged. Throws
  // std::invalid_argument with a one-line reason on bad options (a layer or head out of range).
  virtual Json run(Trainer& trainer, const AnalysisOptions& options) const = 0;
  // A few lines for people, from run()'s result.
  virtual std::string describe(const Json& result) const = 0;
};

using AnalysisRegistry = Registry<Analysis>;

// Validation batches of the trainer's task at its sequence length, reproducible from `seed`.
std::vector<Batch> validationBatches(const Trainer& trainer, int batches, uint64_t seed);
// The (layer, head) pairs selected by the options; throws std::invalid_argument when out of range.
std::vector<std::pair<int, int>> selectedHeads(const ModelConfig& config, const AnalysisOptions& options);

}  // namespace attnlab
