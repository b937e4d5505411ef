#include "train/circuit_lr.h"

#include <sstream>

namespace attnlab {
namespace {

// "1,3" -> {1, 3}; false on anything but comma-separated whole numbers.
bool parseLayers(const std::string& text, std::vector<int>& layers) {
  layers.clear();
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 4) return false;
    layers.push_back(std::stoi(item));
  }
  return true;
}

enum class Circuit { none, qk, ov };

// "blocks.3.attn.wq.weight" -> layer 3, QK.
Circuit circuitOf(const std::string& name, int& layer) {
  const std::string pre = "blocks.";
  if (name.compare(0, pre.size(), pre) != 0) return Circuit::none;
  const size_t dot = name.find('.', pre.size());
  if (dot == std::string::npos) return Circuit::none;
  layer = std::stoi(name.substr(pre.size(), dot - pre.size()));
  const std::string rest = name.substr(dot + 1);
  // latent KV: W_UK is QK, W_UV is OV, and W_DKV, feeding both, stays at the base rate
  if (rest == "attn.wq.weight" || rest == "attn.wk.weight" || rest == "attn.wqk.weight" || rest == "attn.wuk.weight") return Circuit::qk;
  if (rest == "attn.wv.weight" || rest == "attn.wo.weight" || rest == "attn.wuv.weight") return Circuit::ov;
  return Circuit::none;
}

}  // namespace

std::string validateCircuitLr(const TrainConfig& c, int layers) {
  for (auto [key, v] : {std::pair{"train.qk_lr_ratio", c.qk_lr_ratio}, {"train.ov_lr_ratio", c.ov_lr_ratio}})
    if (!(v >= 0 && v <= 100)) return std::string(key) + " must be in [0, 100] (1 is the base learning rate)";
  std::vector<int> list;
  if (!parseLayers(c.lr_ratio_layers, list))
    return "train.lr_ratio_layers must list layer indices separated by commas, e.g. \"1,2\" (empty: every layer)";
  for (const int l : list)
    if (l >= layers)
      return "train.lr_ratio_layers names layer " + std::to_string(l) + " but the model has " + std::to_string(layers) + " (0 to " +
             std::to_string(layers - 1) + ")";
  if (c.lr_ratio_from < 0 || c.lr_ratio_until < 0 || (c.lr_ratio_until > 0 && c.lr_ratio_until <= c.lr_ratio_from))
    return "train.lr_ratio_from and lr_ratio_until must be >= 0 with until > from (until 0: to the end)";
  return {};
}

bool circuitLrActive(const TrainConfig& c) { return c.qk_lr_ratio != 1.0 || c.ov_lr_ratio != 1.0; }

std::vector<float> circuitLrRatios(const ParamStore& params, const TrainConfig& c, int step) {
  std::vector<int> layers;
  parseLayers(c.lr_ratio_layers, layers);  // validated with the config
  const bool inWindow = step >= c.lr_ratio_from && (c.lr_ratio_until == 0 || step < c.lr_ratio_until);
  std::vector<float> ratios;
  for (const auto& p : params.all()) {
    int layer = -1;
    const Circuit circuit = circuitOf(p->name, layer);
    bool listed = layers.empty();
    for (const int l : layers) listed = listed || l == layer;
    float ratio = 1.0f;
    if (inWindow && listed && circuit == Circuit::qk) ratio = static_cast<float>(c.qk_lr_ratio);
    if (inWindow && listed && circuit == Circuit::ov) ratio = static_cast<float>(c.ov_lr_ratio);
    ratios.push_back(ratio);
  }
  return ratios;
}

}  // namespace attnlab
