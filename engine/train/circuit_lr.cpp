#include "train/circuit_lr.h"

#include <sstream>

namespace attnlab {
namespace {

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

bool circuitLrActive(const TrainConfig& c) { return c.qk_lr_ratio != 1.0 || c.ov_lr_ratio != 1.0; }

std::vector<float> circuitLrRatios(const ParamStore& params, const TrainConfig& c, int step) {
  std::vector<int> layers;
  parseLayerList(c.lr_ratio_layers, layers);  // validated with the config
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
