#pragma once
// Head importance measured on the model as a view shows it, i.e. with some heads already
// switched off by head gains (analysis/head_importance.h measures the intact model). With no heads
// off, the numbers equal headImportance's and headImportanceReport's.
//   ablation: L(gains with g_h = 0) - L(gains with g_h = 1), the other heads as they are (for a head
//             that is off this says what switching it back on would recover);
//   gradient: |dL/dg_h| at the given gains, absolute per batch, averaged over the batches;
//   curves:   from the given gains, the heads still on are removed one at a time in ascending,
//             descending (of ablation importance) or random order.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "analysis/head_importance.h"

namespace attnlab {

using HeadGains = std::vector<std::vector<float>>;  // [layer][head]; empty: every head on

struct LiveHeadImportance {
  TaskMetric shown;                   // the model with the given gains
  std::vector<HeadImportance> heads;  // every head, in (layer, head) order
  std::vector<HeadDropCurve> curves;  // ascending, descending, random
};

// Thrown when `stopRequested` says the caller no longer wants the result.
struct AnalysisStopped : std::runtime_error {
  AnalysisStopped() : std::runtime_error("the analysis was stopped") {}
};

// Leaves the model's head gains set to `gains` and its parameter gradients zero. Throws
// std::invalid_argument when `gains` is not empty and not shaped [n_layers][n_heads]. It takes
// n_layers n_heads ablations (each from its own block on) and 3 curves of at most kMaxDropPoints + 1
// evaluations; `stopRequested` (if set) is asked before each, and a true
// answer ends the work with AnalysisStopped (a closing window must not wait for it).
LiveHeadImportance liveHeadImportance(Model& model, const std::vector<Batch>& batches, bool hasAnswers,
                                      const HeadGains& gains, uint64_t seed,
                                      const std::function<bool()>& stopRequested = {});

}  // namespace attnlab
