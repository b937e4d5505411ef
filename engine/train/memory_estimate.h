#pragma once
// What training an experiment will need in memory, shown before training starts.
#include <cstddef>
#include <string>

#include "experiment/experiment_config.h"

namespace attnlab {

struct MemoryEstimate {
  size_t parameters = 0;       // trainable numbers
  size_t parameterBytes = 0;   // float32 values and their gradients
  size_t optimizerBytes = 0;   // AdamW's two moments per parameter
  size_t activationBytes = 0;  // one forward and backward at [batch, sequence length] (Model::activationBytes)
  int sequenceLength = 0;
  size_t totalBytes() const { return parameterBytes + optimizerBytes + activationBytes; }
};

// Whether the estimate also refuses a model whose weights alone exceed this machine's memory
// (training here), or not (planning a run for other machines).
enum class ThisMachine { mustFit, mayNotFit };

// Returns "" and fills `out`, or the one-line reason the configuration cannot be built. Counts
// the model's parameter shapes without allocating them (Model::shapesOf), so it is exact and
// cheap for any size.
std::string estimateMemory(const ExperimentConfig& config, MemoryEstimate& out, ThisMachine machine = ThisMachine::mustFit);

// Training FLOPs per token of a model with `parameters` numbers on sequences of `sequenceLength`:
// 6 per parameter (forward 2, backward 4) plus the attention products q.k and a.v, 2 x 2 x T x d
// per layer forward, halved by causality, times 3 for the backward.
double trainingFlopsPerToken(const ModelConfig& model, double parameters, int sequenceLength);
// One training step's: batch x sequence length tokens, from an estimate of `config`.
double trainingFlopsPerStep(const ExperimentConfig& config, const MemoryEstimate& estimate);

// Refuses, before anything is allocated, a model whose weights alone (values, gradients and AdamW's
// two moments) would need more than this machine's memory, e.g. a config.json from elsewhere with a
// vocabulary of two billion. Counts a lower bound (token embedding, query/output projections, MLP),
// so no model that fits is refused. Returns "" or the one-line reason.
std::string checkFitsInMemory(const ModelConfig& model);

}  // namespace attnlab
