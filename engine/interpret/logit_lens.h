#pragma once
// Logit lens (nostalgebraist 2020): each layer's residual stream read through the model's final
// norm and unembedding, logits_l = U ln_f(resid_l), as if the remaining blocks were skipped.
// Layer l < n_layers reads the stream entering block l; layer n_layers the final residual, whose
// lens logits are the model's logits.
#include <vector>

#include "model/model.h"

namespace attnlab {

struct LensCell {
  int layer = 0, position = 0;
  std::vector<int> top;           // the k most probable tokens, best first
  std::vector<double> top_probs;  // their probabilities
  int token = -1;                 // the tracked token
  int rank = 0;                   // its rank (0 = most probable)
  double prob = 0, logit = 0;
};

struct LogitLens {
  std::vector<Mat> logits;  // [n_layers + 1] x [T, vocab]
  std::vector<LensCell> cells;  // layer-major, then position
};

// `token` -1 tracks, at each position, the model's own top prediction there. Throws
// std::invalid_argument on an empty or over-long prompt, a token out of range or k < 1.
LogitLens logitLens(const Model& model, const std::vector<int>& tokens, int k = 5, int token = -1);

}  // namespace attnlab
