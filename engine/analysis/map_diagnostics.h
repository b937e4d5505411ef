#pragma once
// Per-head map diagnostics, and their per-layer means over training (the training charts).
// Row averages skip rows with a single visible key (a query with no choice says nothing):
// under a causal mask that is row 0. Entropy, normalised entropy and the sink score describe
// where a row's weight goes, so they are computed on the row divided by its total mass: for
// variants whose rows do not sum to 1 (sigmoid, a learned sink, a gate on sigmoid) the raw values
// would mix "how much" into "where" (a sigmoid row of total 3 could show a normalised entropy
// above 1). row_mass reports the mean total, and renormalised says when a row's differed from 1.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/random.h"
#include "data/task.h"
#include "model/model.h"

namespace attnlab {

struct MapDiagnostics {
  double entropy = 0;             // -sum_j a_ij log a_ij (nats)
  double normalised_entropy = 0;  // the same divided by log(visible keys of row i)
  double mean_distance = 0;       // sum_j a_ij |i - j|
  double sink = 0;                // a_i0: mass on the first token
  double previous_token = 0;      // a_i,i-1
  double induction = 0;           // on [r, r] for random r of length n: a_i,i-n+1 over the repeat
  double effective_rank = 0;      // exp(entropy of the normalised singular values of the map); 0 when skipped
  double row_mass = 0;            // sum_j a_ij over the visible keys (1 for softmax)
  bool renormalised = false;      // some row's mass differed from 1: entropies and sink are of a_ij / row mass
};

// The effective rank is a singular value decomposition of the map, O(T^3): at 1,024 tokens it costs
// far more than the rest, so callers that do not show it skip it.
enum class EffectiveRank { computed, skipped };

// Diagnostics of one [T, T] row-major map (everything but induction); entropies and sink on
// each row normalised to 1 (see above), distance and previous-token on the weights as they are. `scores` tells visible keys
// (finite) from masked ones (-inf); null means causal (j <= i).
MapDiagnostics diagnoseMap(const float* weights, const float* scores, int T, EffectiveRank rank = EffectiveRank::computed);
// Mean of a_i,i-n+1 over the repeat's rows i in [start + n, start + 2n) of a map of the sequence
// [prefix, r, r] with |prefix| = start and |r| = n.
double inductionScore(const float* weights, int T, int n, int start = 0);
double effectiveRank(const float* weights, int T);

// Holds a probe batch from the task and a batch of repeated random sequences, and a workspace, so
// that measuring a model is two small forward passes (cheap enough for every training snapshot).
// Previous-token and induction scores come from the random sequences (nothing in them but the
// previous token and the repeat to lean on, and no task padding to dilute them); the rest from the
// task's probe batch. Each random sequence starts with the first token of a task sequence, since
// models lean on it (a leading pad or separator) as an anchor.
class MapDiagnosticsProbe {
 public:
  // `seqLen`: the task's sequence length; the random sequences are [t0, r, r] with |r| = (seqLen - 1) / 2.
  MapDiagnosticsProbe(const Task& task, int vocab, int seqLen, int batch, uint64_t seed);
  // A model without a task (one opened from a Hugging Face folder): the rest on `probe` (the
  // user's text) and `batch` random sequences [probe's first token, r, r] with |r| = repeatLength.
  MapDiagnosticsProbe(const Batch& probe, int vocab, int repeatLength, int batch, uint64_t seed);
  ~MapDiagnosticsProbe();
  // [layer][head], averaged over the batch. Uses the model's configured threads.
  std::vector<std::vector<MapDiagnostics>> measure(const Model& model, EffectiveRank rank = EffectiveRank::computed);
  // Mean over the heads of each layer.
  static std::vector<MapDiagnostics> layerMeans(const std::vector<std::vector<MapDiagnostics>>& heads);

 private:
  void drawRepeats(int vocab, int batch, Rng& rng);  // repeated_ from probe_'s first tokens

  Batch probe_, repeated_;
  int half_ = 0;
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace attnlab
