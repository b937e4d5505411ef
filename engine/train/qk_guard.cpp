#include "train/qk_guard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/workspace.h"

namespace attnlab {

std::vector<double> layerMaxScores(const Workspace& ws) {
  std::vector<double> out;
  for (const BlockActs& block : ws.blocks) {
    const AttentionActs& a = block.attn;
    const int T = a.shape.T, maps = a.shape.B * a.shape.H;
    float largest = 0;
    if (a.attended_without_maps) {  // each row's largest |s| the forward kept instead of maps
      for (float v : a.row_max_abs_score)
        if (std::isfinite(v)) largest = std::max(largest, v);
      out.push_back(largest);
      continue;
    }
    if (a.scores.size() < a.shape.mapSize()) {  // activations already dropped (inference): nothing measured
      out.push_back(std::nan(""));
      continue;
    }
    for (int m = 0; m < maps; ++m)
      for (int i = 0; i < T; ++i) {
        const Eigen::Map<const Eigen::ArrayXf> row(a.scores.data() + (static_cast<size_t>(m) * T + i) * T, i + 1);
        largest = std::max(largest, row.isFinite().select(row.abs(), 0.0f).maxCoeff());  // -inf marks masked keys
      }
    out.push_back(largest);
  }
  return out;
}

std::vector<int> layersCrossing(const ModelConfig& config, const std::vector<double>& maxScores, double threshold) {
  std::vector<int> out;
  if (threshold <= 0) return out;
  for (int l = 0; l < static_cast<int>(maxScores.size()); ++l)
    if (config.attentionOf(l) == "softmax" && maxScores[l] > threshold) out.push_back(l);
  return out;
}

ModelConfig withQkNorm(const ModelConfig& config, const std::vector<int>& layers) {
  ModelConfig out = config;
  out.attention.clear();
  for (int l = 0; l < config.n_layers; ++l) out.attention.push_back(config.attentionOf(l));
  for (int l : layers) out.attention[l] = "qk_norm";
  return out;
}

std::unique_ptr<Model> switchToQkNorm(const Model& model, const ModelConfig& config, const std::vector<int>& layers, float tau,
                                      const TrainConfig& train, std::unique_ptr<AdamW>& optimizer) {
  std::unique_ptr<Model> next = copyModelAs(model, config);
  for (int l : layers) next->params().find("blocks." + std::to_string(l) + ".attn.qk_norm_tau")->value.setConstant(tau);
  // Moments by name: every parameter the old model had keeps its Adam state, tau_h starts at zero.
  const auto& before = model.params().all();
  std::vector<Mat> m, v;
  for (const auto& p : next->params().all()) {
    const auto same = std::find_if(before.begin(), before.end(), [&](const auto& q) { return q->name == p->name; });
    const size_t i = static_cast<size_t>(same - before.begin());
    const bool kept = same != before.end();
    m.push_back(kept ? optimizer->firstMoments()[i] : Mat::Zero(p->value.rows(), p->value.cols()));
    v.push_back(kept ? optimizer->secondMoments()[i] : Mat::Zero(p->value.rows(), p->value.cols()));
  }
  const int steps = optimizer->steps();
  optimizer = std::make_unique<AdamW>(next->params(), train);
  optimizer->restore(steps, std::move(m), std::move(v));
  return next;
}

double switchScore(const TrainPoint& point, int layer) {
  return layer >= 0 && layer < static_cast<int>(point.layer_max_score.size()) ? point.layer_max_score[layer] : std::nan("");
}

std::string qkGuardMessage(int step, int layer, double score, double threshold) {
  char text[160];
  std::snprintf(text, sizeof text, "QK-guard: layer %d at step %d (largest score %.4g > %.4g): qk_norm from step %d", layer + 1, step,
                score, threshold, step + 1);
  return text;
}

}  // namespace attnlab
