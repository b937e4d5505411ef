#include "analysis/live_head_importance.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/random.h"
#include "model/workspace.h"

namespace attnlab {

namespace {

HeadGains fullGains(const ModelConfig& c, const HeadGains& gains) {
  if (gains.empty()) return HeadGains(c.n_layers, std::vector<float>(c.n_heads, 1.0f));
  const bool fits = static_cast<int>(gains.size()) == c.n_layers &&
                    std::all_of(gains.begin(), gains.end(), [&c](const auto& layer) { return static_cast<int>(layer.size()) == c.n_heads; });
  if (!fits) throw std::invalid_argument("head gains must be " + std::to_string(c.n_layers) + " layers x " + std::to_string(c.n_heads) + " heads");
  return gains;
}

using StopCheck = std::function<bool()>;

TaskMetric evaluateWith(Model& model, const std::vector<Batch>& batches, bool hasAnswers, const HeadGains& gains,
                        const StopCheck& stop) {
  if (stop && stop()) throw AnalysisStopped();
  model.setHeadGains(gains);
  return evaluateOn(model, batches, hasAnswers);
}

HeadDropCurve dropFrom(Model& model, const std::vector<Batch>& batches, bool hasAnswers, const HeadGains& start,
                       const char* order, std::vector<std::pair<int, int>> removal, const StopCheck& stop) {
  HeadDropCurve curve;
  curve.order = order;
  curve.removed = std::move(removal);
  curve.count = dropCurvePoints(static_cast<int>(curve.removed.size()));
  HeadGains gains = start;
  int removedSoFar = 0;
  for (int count : curve.count) {
    for (; removedSoFar < count; ++removedSoFar) gains[curve.removed[removedSoFar].first][curve.removed[removedSoFar].second] = 0;
    const TaskMetric m = evaluateWith(model, batches, hasAnswers, gains, stop);
    curve.loss.push_back(m.loss);
    curve.metric.push_back(hasAnswers ? m.accuracy : m.loss);
  }
  const double mean = std::accumulate(curve.metric.begin(), curve.metric.end(), 0.0) / curve.metric.size();
  curve.resilience = hasAnswers ? mean : -mean;
  return curve;
}

}  // namespace

LiveHeadImportance liveHeadImportance(Model& model, const std::vector<Batch>& batches, bool hasAnswers,
                                      const HeadGains& gains, uint64_t seed, const StopCheck& stopRequested) {
  const ModelConfig& c = model.config();
  const HeadGains base = fullGains(c, gains);
  LiveHeadImportance r;
  r.shown = evaluateWith(model, batches, hasAnswers, base, stopRequested);
  const BlockInputs inputs = blockInputs(model, batches);  // flipping a head in block l leaves the blocks before it alone
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      HeadGains flipped = base;
      const bool on = base[l][h] != 0;
      flipped[l][h] = on ? 0.0f : 1.0f;
      if (stopRequested && stopRequested()) throw AnalysisStopped();
      model.setHeadGains(flipped);
      const double other = lossFrom(model, batches, l, inputs);
      r.heads.push_back({l, h, on ? other - r.shown.loss : r.shown.loss - other, 0.0});
    }

  auto ws = makeWorkspace();
  for (const Batch& batch : batches) {
    model.setHeadGains(base);  // also clears the gain gradients of the previous batch
    model.params().zeroGrad();
    model.forward(*ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
    model.backward(*ws);
    const auto grad = model.headGainGradients();
    for (HeadImportance& hi : r.heads) hi.gradient += std::abs(grad[hi.layer][hi.head]) / batches.size();
  }
  model.params().zeroGrad();

  // Only heads still on can be removed; stable sort, so ties keep (layer, head) order.
  std::vector<HeadImportance> on;
  for (const HeadImportance& h : r.heads)
    if (base[h.layer][h.head] != 0) on.push_back(h);
  std::stable_sort(on.begin(), on.end(), [](const auto& a, const auto& b) { return a.ablation < b.ablation; });
  std::vector<std::pair<int, int>> ascending;
  for (const HeadImportance& h : on) ascending.push_back({h.layer, h.head});
  std::vector<std::pair<int, int>> descending(ascending.rbegin(), ascending.rend());
  std::vector<std::pair<int, int>> random = ascending;
  Rng rng(seed);
  std::shuffle(random.begin(), random.end(), rng.engine());
  r.curves.push_back(dropFrom(model, batches, hasAnswers, base, "ascending", ascending, stopRequested));
  r.curves.push_back(dropFrom(model, batches, hasAnswers, base, "descending", descending, stopRequested));
  r.curves.push_back(dropFrom(model, batches, hasAnswers, base, "random", random, stopRequested));
  model.setHeadGains(base);
  return r;
}

}  // namespace attnlab
