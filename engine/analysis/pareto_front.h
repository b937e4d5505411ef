#pragma once
// The Pareto front of points to be minimised on both axes (cost, loss): the points no other point
// matches or beats on both with one strictly better. The projection-sharing study joins its arms
// (KV bytes per token, perplexity) on it.
#include <vector>

namespace attnlab {

struct CostLoss {
  double cost = 0, loss = 0;
};

// Indices of the Pareto-optimal points, by increasing cost (then loss). Points with a NaN are never
// on the front; equal points are both on it (neither beats the other).
std::vector<int> paretoFront(const std::vector<CostLoss>& points);

}  // namespace attnlab
