#pragma once
// The per-layer attention diagnostics a run keeps in its history (history.csv): the mean over a
// layer's heads of the map diagnostics on a fixed probe (analysis/map_diagnostics.h), measured at
// each validation step by the probe the trainer is given (Trainer::setDiagnosticsProbe). Empty
// vectors: not measured at that step.
#include <vector>

namespace attnlab {

struct LayerDiagnostics {
  std::vector<double> entropy;         // mean attention entropy of a row (nats), on the task's probe
  std::vector<double> previous_token;  // mean a_i,i-1, on repeated random sequences
  std::vector<double> induction;       // mean weight on the token after the earlier copy, on the repeat
  std::vector<double> sink;            // mean a_i0: weight on the first token, on the task's probe
  bool empty() const { return entropy.empty() && previous_token.empty() && induction.empty() && sink.empty(); }
};

}  // namespace attnlab
