#include "analysis/head_importance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "analysis/analysis.h"
#include "core/random.h"
#include "model/workspace.h"

namespace attnlab {

namespace {
using Gains = std::vector<std::vector<float>>;
Gains allOnes(const ModelConfig& c) { return Gains(c.n_layers, std::vector<float>(c.n_heads, 1.0f)); }
}  // namespace

TaskMetric evaluateOn(const Model& model, const std::vector<Batch>& batches, bool hasAnswers) {
  auto ws = makeWorkspace();
  TaskMetric m;
  double lossSum = 0;
  long counted = 0, answers = 0, correct = 0;
  for (const Batch& batch : batches) {
    const double loss = model.forward(*ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
    lossSum += loss * ws->counted;
    counted += ws->counted;
    const Mat& logits = workspaceLogits(*ws);
    for (int row = 0; row < batch.B * batch.T; ++row) {
      if (batch.targets[row] < 0) continue;
      Eigen::Index argmax;
      logits.row(row).maxCoeff(&argmax);
      correct += argmax == batch.targets[row];
      ++answers;
    }
  }
  m.loss = counted ? lossSum / counted : 0.0;
  if (hasAnswers && answers) m.accuracy = static_cast<double>(correct) / answers;
  return m;
}

BlockInputs blockInputs(const Model& model, const std::vector<Batch>& batches) {
  BlockInputs out;
  auto ws = makeWorkspace();
  for (const Batch& batch : batches) {
    model.forward(*ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
    std::vector<Mat>& layers = out.emplace_back();
    for (const BlockActs& block : ws->blocks) layers.push_back(block.x);  // the stream entering the block
  }
  return out;
}

double lossFrom(const Model& model, const std::vector<Batch>& batches, int layer, const BlockInputs& inputs) {
  auto ws = makeWorkspace();
  ws->inference = true;  // no backward follows
  layer = model.config().kvSourceOf(layer);  // cross-layer KV: from the group's first block, whose K/V the block reads
  ws->first_layer = layer;
  double lossSum = 0;
  long counted = 0;
  for (size_t b = 0; b < batches.size(); ++b) {
    const Batch& batch = batches[b];
    if (layer > 0) ws->start_stream = inputs[b][layer];
    lossSum += model.forward(*ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T) * ws->counted;
    counted += ws->counted;
  }
  return counted ? lossSum / counted : 0.0;
}

std::vector<int> dropCurvePoints(int heads) {
  std::vector<int> points;
  const int n = std::min(heads, kMaxDropPoints);
  for (int k = 0; k <= n; ++k) points.push_back(n ? static_cast<int>((static_cast<long>(k) * heads + n / 2) / n) : 0);
  return points;
}

std::vector<HeadImportance> headImportance(Model& model, const std::vector<Batch>& batches) {
  const ModelConfig& c = model.config();
  std::vector<HeadImportance> out;
  model.setHeadGains({});
  const double intact = evaluateOn(model, batches, false).loss;
  const BlockInputs inputs = blockInputs(model, batches);
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      Gains gains = allOnes(c);
      gains[l][h] = 0;
      model.setHeadGains(gains);
      out.push_back({l, h, lossFrom(model, batches, l, inputs) - intact, 0.0});
    }

  auto ws = makeWorkspace();
  for (const Batch& batch : batches) {
    model.setHeadGains(allOnes(c));  // also clears the gain gradients
    model.params().zeroGrad();
    model.forward(*ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
    model.backward(*ws);
    const auto grad = model.headGainGradients();
    for (HeadImportance& hi : out) hi.gradient += std::abs(grad[hi.layer][hi.head]) / batches.size();
  }
  model.params().zeroGrad();
  model.setHeadGains({});
  return out;
}

HeadDropCurve headDropCurve(Model& model, const std::vector<Batch>& batches, bool hasAnswers, std::string order,
                            const std::vector<std::pair<int, int>>& removal) {
  HeadDropCurve curve;
  curve.order = std::move(order);
  curve.removed = removal;
  curve.count = dropCurvePoints(static_cast<int>(removal.size()));
  Gains gains = allOnes(model.config());
  int removedSoFar = 0;
  for (int count : curve.count) {
    for (; removedSoFar < count; ++removedSoFar) gains[removal[removedSoFar].first][removal[removedSoFar].second] = 0;
    model.setHeadGains(gains);
    const TaskMetric m = evaluateOn(model, batches, hasAnswers);
    curve.loss.push_back(m.loss);
    curve.metric.push_back(hasAnswers ? m.accuracy : m.loss);
  }
  model.setHeadGains({});
  const double mean = std::accumulate(curve.metric.begin(), curve.metric.end(), 0.0) / curve.metric.size();
  curve.resilience = hasAnswers ? mean : -mean;
  return curve;
}

HeadImportanceReport headImportanceReport(Model& model, const std::vector<Batch>& batches, bool hasAnswers, uint64_t seed) {
  HeadImportanceReport r;
  model.setHeadGains({});
  r.intact = evaluateOn(model, batches, hasAnswers);
  r.heads = headImportance(model, batches);
  std::vector<HeadImportance> sorted = r.heads;  // stable: ties keep (layer, head) order
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.ablation < b.ablation; });
  std::vector<std::pair<int, int>> ascending;
  for (const auto& h : sorted) ascending.push_back({h.layer, h.head});
  std::vector<std::pair<int, int>> descending(ascending.rbegin(), ascending.rend());
  std::vector<std::pair<int, int>> random = ascending;
  Rng rng(seed);
  std::shuffle(random.begin(), random.end(), rng.engine());
  r.curves.push_back(headDropCurve(model, batches, hasAnswers, "ascending", ascending));
  r.curves.push_back(headDropCurve(model, batches, hasAnswers, "descending", descending));
  r.curves.push_back(headDropCurve(model, batches, hasAnswers, "random", random));
  return r;
}

namespace {

Json numberOrNull(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

class HeadImportanceAnalysis : public Analysis {
 public:
  Json run(Trainer& trainer, const AnalysisOptions& options) const override {
    const auto selected = selectedHeads(trainer.config().model, options);
    const HeadImportanceReport r = headImportanceReport(trainer.model(), validationBatches(trainer, options.batches, options.seed),
                                                        trainer.task().hasAnswers(), options.seed);
    Json heads = Json::array();
    for (const HeadImportance& h : r.heads)
      if (std::find(selected.begin(), selected.end(), std::make_pair(h.layer, h.head)) != selected.end())
        heads.push_back({{"layer", h.layer}, {"head", h.head}, {"ablation", h.ablation}, {"gradient", h.gradient}});
    Json curves = Json::array();
    for (const HeadDropCurve& c : r.curves) {
      Json removed = Json::array();
      for (auto [l, h] : c.removed) removed.push_back({l, h});
      Json metric = Json::array();
      for (double m : c.metric) metric.push_back(numberOrNull(m));
      curves.push_back({{"order", c.order}, {"removed", removed}, {"loss", c.loss}, {"metric", metric}, {"resilience", c.resilience}});
    }
    return {{"metric", trainer.task().hasAnswers() ? "accuracy" : "loss"},
            {"batches", options.batches},
            {"intact", {{"loss", r.intact.loss}, {"accuracy", numberOrNull(r.intact.accuracy)}}},
            {"heads", std::move(heads)},
            {"curves", std::move(curves)}};
  }

  std::string describe(const Json& result) const override {
    std::ostringstream out;
    out << "intact loss " << result["intact"]["loss"].get<double>() << ", metric " << result["metric"].get<std::string>() << "\n";
    out << "layer head  ablation (loss +)  gradient\n";
    for (const Json& h : result["heads"]) {
      char line[120];
      std::snprintf(line, sizeof line, "%5d %4d  %16.4f  %8.4f\n", h["layer"].get<int>(), h["head"].get<int>(),
                    h["ablation"].get<double>(), h["gradient"].get<double>());
      out << line;
    }
    for (const Json& c : result["curves"]) {
      out << "drop " << c["order"].get<std::string>() << ":";
      for (const Json& m : c["metric"]) {
        char v[32];
        std::snprintf(v, sizeof v, " %.3f", m.is_null() ? NAN : m.get<double>());
        out << v;
      }
      out << "  (resilience " << c["resilience"].get<double>() << ")\n";
    }
    return out.str();
  }
};

ATTNLAB_REGISTER(AnalysisRegistry, "head_importance",
                 "ablation and gradient importance per head; head-drop curves in ascending, descending, random order",
                 [] { return std::make_unique<HeadImportanceAnalysis>(); });

}  // namespace
}  // namespace attnlab
