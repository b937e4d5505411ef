#pragma once
// What one forward pass on a probe input exposes to the views. Captured only on request:
// a normal training forward fills nothing here.
#include <limits>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attnlab {

struct HeadTrace {
  Mat scores;   // [T, T] pre-normalisation scores incl. positional bias; -inf where masked
  Mat weights;  // [T, T] attention weights (0 where masked; the scores tell masked from zero)
  Mat q, k, v;  // [T, d_head] after positional rotation (k, v are the head's shared KV head under GQA)
  std::vector<float> gate;      // per key position, retention/value gate if the variant has one
  std::vector<float> presence;  // per position, presence if the variant has one
  std::vector<float> output_gate;  // per query position, the head's output gate (mean over d_head if element-wise)
};

struct LayerTrace {
  std::string variant;
  std::vector<HeadTrace> heads;
  std::vector<float> residual_norm;  // [T] ||x|| entering the block
};

struct Trace {
  std::vector<int> tokens;
  std::vector<std::string> labels;  // token text per position
  std::vector<LayerTrace> layers;
  std::vector<float> final_residual_norm;
  Mat logits;  // [T, vocab]
};

}  // namespace attnlab
