#include "analysis/content_induction.h"

#include <unordered_map>

namespace attnlab {

std::vector<int> inductionTargets(const std::vector<int>& tokens) {
  std::vector<int> targets(tokens.size(), -1);
  std::unordered_map<int, int> seen, lastAt;  // token -> times seen before, position of its latest occurrence
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    if (seen[tokens[i]] == 1) targets[i] = lastAt[tokens[i]] + 1;
    ++seen[tokens[i]];
    lastAt[tokens[i]] = i;
  }
  return targets;
}

ContentInduction contentInductionScore(const Mat& weights, const std::vector<int>& targets) {
  ContentInduction out;
  const int rows = std::min<int>(static_cast<int>(targets.size()), static_cast<int>(weights.rows()));
  for (int i = 0; i < rows; ++i)
    if (targets[i] >= 0 && targets[i] < weights.cols()) out.score += weights(i, targets[i]), ++out.rows;
  if (out.rows) out.score /= out.rows;
  return out;
}

}  // namespace attnlab
