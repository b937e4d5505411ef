#pragma once
// The induction score located by content rather than by a fixed offset: for each row i whose token
// occurred exactly once before, at p, the weight a_i,p+1 on the token after that occurrence (what
// an induction head attends to, to copy it as the next token). map_diagnostics.h's inductionScore
// assumes the sequence [prefix, r, r] with a known |r|; this one reads any sequence, so it can be
// measured on the induction task's own sequences, whose repeat starts at a varying offset (a head
// attending a fixed distance back scores there only where that distance happens to be right).
#include <vector>

#include "core/tensor.h"

namespace attnlab {

// Per row, the induction target p + 1, or -1 where the row's token did not occur exactly once before.
std::vector<int> inductionTargets(const std::vector<int>& tokens);
// Mean a_i,target over the rows with a target, and how many rows that was (0: the score is 0).
struct ContentInduction {
  double score = 0;
  int rows = 0;
};
ContentInduction contentInductionScore(const Mat& weights, const std::vector<int>& targets);

}  // namespace attnlab
