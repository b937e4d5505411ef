#pragma once
// What training an experiment will need in memory, shown before training starts.
#include <cstddef>
#include <string>

#include "model/config.h"

namespace attnlab {

struct MemoryEstimate {
  size_t parameters = 0;       // trainable numbers
  size_t parameterBytes = 0;   // float32 values and their gradients
  size_t optimizerBytes = 0;   // AdamW's two moments per parameter
  size_t activationBytes = 0;  // one forward and backward at [batch, sequence length] (Model::activationBytes)
  int sequenceLength = 0;
  bool exact = true;           // false: extrapolated from one- and two-layer models (very large configurations)
  size_t totalBytes() const { return parameterBytes + optimizerBytes + activationBytes; }
};

// Above this many parameters (a rough count), building the model just to count it would cost real
// time and memory on every edit in the panel; the estimate then extrapolates from 1- and 2-layer models.
constexpr double kLargestModelBuilt = 8e6;

// Returns "" and fills `out`, or the one-line reason the configuration cannot be built.
std::string estimateMemory(const ExperimentConfig& config, MemoryEstimate& out, double largestModelBuilt = kLargestModelBuilt);

// Refuses, before anything is allocated, a model whose weights alone (values, gradients and AdamW's
// two moments) would need more than this machine's memory, e.g. a config.json from elsewhere with a
// vocabulary of two billion. Counts a lower bound (token embedding, query/output projections, MLP),
// so no model that fits is refused. Returns "" or the one-line reason.
std::string checkFitsInMemory(const ModelConfig& model);

}  // namespace attnlab
