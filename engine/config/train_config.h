#pragma once
// How training runs: steps, batch, the AdamW schedule, seeds, threads, circuit learning rates and
// QK-guard (train/trainer.h follows it).
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

struct TrainConfig {
  int steps = 1000;
  int batch = 16;
  double lr = 3e-3;
  double min_lr_ratio = 0.1;  // cosine decays to lr * min_lr_ratio
  int warmup = 50;
  double weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.98;
  double eps = 1e-8;
  double grad_clip = 1.0;  // 0 disables clipping
  uint64_t seed = 1;
  int threads = 2;
  int eval_every = 100;  // steps between validation evaluations (0: only at the end)
  int eval_batches = 4;
  // Separate learning rates for the two attention circuits (train/circuit_lr.h):
  // W_q, W_k (QK) and W_v, W_o (OV) of the layers listed ("" = all, else e.g. "1,2") step at
  // lr x ratio during steps [from, until) (until 0 = to the end). Ratios 1 are the baseline, bit for bit.
  double qk_lr_ratio = 1.0;
  double ov_lr_ratio = 1.0;
  std::string lr_ratio_layers;
  int lr_ratio_from = 0;
  int lr_ratio_until = 0;
  // QK-guard (train/qk_guard.h): a softmax layer whose largest |score| exceeds this switches to qk_norm (0: off).
  double qk_guard = 0;
};

// "" when every train.* field is in range, else one line saying which and why; `layers` is the
// model's block count (train.lr_ratio_layers must name existing layers).
std::string validateTrainConfig(const TrainConfig& config, int layers);

// train.lr_ratio_layers: "1,3" -> {1, 3}, "" -> {}; false on anything but comma-separated whole numbers.
bool parseLayerList(const std::string& text, std::vector<int>& layers);

}  // namespace attnlab
