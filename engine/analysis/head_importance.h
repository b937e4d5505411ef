#pragma once
// Head importance, through the model's head mask hook (Model::setHeadGains):
//   ablation: loss with the head's output zeroed minus the intact loss;
//   gradient: |d(loss)/d(g_h)| at gains 1, i.e. |sum_i o_i . dL/do_i| over the head's outputs, which
//             equals |sum A * dL/dA| when the head's output is o = A v (softmax-family heads without
//             value rotation); the absolute value is taken per batch, then averaged (Michel et al.).
// Head-drop curves remove heads one at a time in ascending, descending or random order of ablation
// importance and record the task metric (accuracy when the task has answers, else loss) after each.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "data/task.h"
#include "model/model.h"

namespace attnlab {

struct TaskMetric {
  double loss = 0;
  double accuracy = std::numeric_limits<double>::quiet_NaN();  // per answer token; NaN without answers
};
// Loss and accuracy of the model as it stands (head gains included) on `batches`.
TaskMetric evaluateOn(const Model& model, const std::vector<Batch>& batches, bool hasAnswers);

// The residual stream entering every block, per batch, of one pass of the model as it stands:
// a change at block L leaves the blocks before it alone, so its pass may start there.
using BlockInputs = std::vector<std::vector<Mat>>;  // [batch][layer]
BlockInputs blockInputs(const Model& model, const std::vector<Batch>& batches);
// The mean loss on `batches` of a pass that starts at block `layer` from `inputs` (which must come
// from the same model with the same gains in the blocks before `layer`). With cross-layer KV the
// pass starts at the first block of `layer`'s group, whose keys and values block `layer` reads.
double lossFrom(const Model& model, const std::vector<Batch>& batches, int layer, const BlockInputs& inputs);

// The points of a head-drop curve over `heads` removable heads: every count from 0 to `heads`, or
// for a model with more heads than kMaxDropPoints, that many evenly spaced counts (0 and all
// included), so that a 12 x 12 model's curves take 3 x 49 evaluations rather than 3 x 145.
inline constexpr int kMaxDropPoints = 48;
std::vector<int> dropCurvePoints(int heads);

struct HeadImportance {
  int layer = 0, head = 0;
  double ablation = 0;  // loss increase
  double gradient = 0;
};
// Every head of the model. Leaves the head gains off and the parameter gradients zero.
std::vector<HeadImportance> headImportance(Model& model, const std::vector<Batch>& batches);

struct HeadDropCurve {
  std::string order;                         // "ascending", "descending" or "random"
  std::vector<std::pair<int, int>> removed;  // (layer, head) in removal order
  std::vector<int> count;                    // heads removed at each point (dropCurvePoints)
  std::vector<double> loss;                  // after count[k] heads removed
  std::vector<double> metric;                // accuracy (or loss without answers) at the same points
  double resilience = 0;  // mean of metric over the points (negated for loss): higher is more resilient
};
HeadDropCurve headDropCurve(Model& model, const std::vector<Batch>& batches, bool hasAnswers, std::string order,
                            const std::vector<std::pair<int, int>>& removal);

struct HeadImportanceReport {
  TaskMetric intact;
  std::vector<HeadImportance> heads;
  std::vector<HeadDropCurve> curves;  // ascending, descending, random
};
HeadImportanceReport headImportanceReport(Model& model, const std::vector<Batch>& batches, bool hasAnswers, uint64_t seed);

}  // namespace attnlab
