#pragma once
// The forward-pass explainer's numbers: one head's computation for one query, stage by stage,
// taken from the probe's trace (q, k, v, scores, weights) and recombined where the explainer
// shows a formula: q·k/√d from q and k, the positional bias as what the score adds beyond it,
// the normalisation recomputed from the scores (to show it reproduces the trace's weights), and
// the output as the weighted sum of the values. Plain C++: a test compares every stage with the
// trace it came from.
#include <string>
#include <vector>

#include "model/trace.h"

namespace attnlab {

struct ForwardPass {
  int query = 0;  // 0-based position
  int dHead = 0;
  std::string variant;  // the layer's attention variant
  std::vector<float> q;                  // [d]
  std::vector<int> keys;                 // visible key positions (score finite), ascending
  std::vector<bool> visible;             // [T] per key position
  std::vector<std::vector<float>> k, v;  // [keys][d]
  std::vector<double> dot;               // q·k per visible key
  std::vector<double> scaled;            // q·k / sqrt(d)
  std::vector<double> bias;              // the trace's score minus q·k/sqrt(d): positional bias (ALiBi), ~0 else
  std::vector<double> score;             // the trace's score
  std::vector<double> weight;            // the trace's weight
  std::vector<double> recomputed;        // the normalisation applied to `score` (softmax or sigmoid), or empty
  std::string normalisation;             // "softmax", "sigmoid", "linear", "presence" or the variant's own (not recomputed)
  std::vector<double> presence;          // presence coupling (OAttention): p_j per visible key; empty otherwise
  double queryPresence = 1;              // p_i, which scales the output under presence coupling
  double maxScore = 0, expSum = 0;       // softmax: the max subtracted and sum of exp(score - max)
  std::vector<double> output;            // [d] sum_j weight_j v_j (times p_i under presence coupling)
  double weightSum = 0;
};

// Throws std::out_of_range when `query` is not a position of the trace.
ForwardPass explainHead(const HeadTrace& head, const std::string& variant, int query);

// Hover texts: each number with its formula and the numbers it came from.
std::string explainScore(const ForwardPass& f, size_t key);
std::string explainWeight(const ForwardPass& f, size_t key);
std::string explainOutput(const ForwardPass& f, int dim);

}  // namespace attnlab
