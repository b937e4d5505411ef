#pragma once
// Turning one row of logits into probabilities, top-k predictions and sampled tokens.
#include <vector>

#include "core/random.h"

namespace attnlab::cli {

// softmax(logits / temperature) in double precision; temperature must be > 0.
std::vector<double> softmax(const float* logits, int n, double temperature = 1.0);
// Indices of the k largest values, largest first (ties: the lower index first).
std::vector<int> topK(const std::vector<double>& values, int k);
// Draws an index with the given probabilities (which sum to 1).
int sampleIndex(const std::vector<double>& probabilities, Rng& rng);

}  // namespace attnlab::cli
