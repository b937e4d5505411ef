#include "config/train_config.h"

#include <sstream>

namespace attnlab {

bool parseLayerList(const std::string& text, std::vector<int>& layers) {
  layers.clear();
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 4) return false;
    layers.push_back(std::stoi(item));
  }
  return true;
}

std::string validateTrainConfig(const TrainConfig& t, int layers) {
  if (!(t.lr > 0 && t.lr < 10)) return "train.lr must be in (0, 10)";
  if (t.warmup < 0) return "train.warmup must be >= 0";
  if (!(t.beta1 >= 0 && t.beta1 < 1 && t.beta2 >= 0 && t.beta2 < 1)) return "train.beta1 and train.beta2 must be in [0, 1)";
  if (t.weight_decay < 0 || t.grad_clip < 0 || t.eps <= 0) return "train.weight_decay, grad_clip must be >= 0 and eps > 0";
  if (t.min_lr_ratio < 0 || t.min_lr_ratio > 1) return "train.min_lr_ratio must be in [0, 1]";
  if (t.threads > 64) return "train.threads must be at most 64";
  if (t.eval_every < 0 || t.eval_batches <= 0) return "train.eval_every must be >= 0 and train.eval_batches > 0";
  // Separate learning rates for the two attention circuits (train/circuit_lr.h).
  for (auto [key, v] : {std::pair{"train.qk_lr_ratio", t.qk_lr_ratio}, {"train.ov_lr_ratio", t.ov_lr_ratio}})
    if (!(v >= 0 && v <= 100)) return std::string(key) + " must be in [0, 100] (1 is the base learning rate)";
  std::vector<int> list;
  if (!parseLayerList(t.lr_ratio_layers, list))
    return "train.lr_ratio_layers must list layer indices separated by commas, e.g. \"1,2\" (empty: every layer)";
  for (const int l : list)
    if (l >= layers)
      return "train.lr_ratio_layers names layer " + std::to_string(l) + " but the model has " + std::to_string(layers) + " (0 to " +
             std::to_string(layers - 1) + ")";
  if (t.lr_ratio_from < 0 || t.lr_ratio_until < 0 || (t.lr_ratio_until > 0 && t.lr_ratio_until <= t.lr_ratio_from))
    return "train.lr_ratio_from and lr_ratio_until must be >= 0 with until > from (until 0: to the end)";
  // QK-guard (train/qk_guard.h).
  if (!(t.qk_guard >= 0 && t.qk_guard <= 1e6)) return "train.qk_guard must be a score threshold in [0, 1e6] (0: off)";
  return {};
}

}  // namespace attnlab
