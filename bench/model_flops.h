#pragma once
// Model FLOPs of one training token, counted analytically from the matrix products (the formula
// is in README.md, "Peak and model FLOPs"), the same for this engine and the PyTorch peer.
#include "experiment/experiment_config.h"

namespace attnlab::bench {

// Forward and backward of every weight matrix of the blocks and the LM head, plus the attention
// products over the keys a causal query sees, for sequences of T tokens.
double trainingFlopsPerToken(const ModelConfig& config, int T);

}  // namespace attnlab::bench
