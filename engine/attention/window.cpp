#include "attention/attention.h"
#include "attention/softmax_core.h"
#include "attention/softmax_tiled.h"

namespace attnlab {
namespace {

// Sliding-window attention: softmax restricted to the last w keys, j in [i - w + 1, i]; weights outside are exactly 0
// and their scores -inf. Shares softmax's math (softmax_core.h), so temperature and the key gate behave alike.
class WindowAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {temperatureSetting(), {"window", 16, 1, 8192, true, "w: each query sees its own key and the w - 1 before it"}};
  }
  std::string configure(const ModelConfig& config, const std::string&, ParamStore&) override {
    const auto specs = settingSpecs();
    beta_ = static_cast<float>(settingOr(config.attention_settings, specs[0]));
    window_ = static_cast<int>(settingOr(config.attention_settings, specs[1]));
    return {};
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    if (!out.weights) tiledSoftmaxForward(in, out, beta_, window_);
    else softmaxAttentionForward(in, out, beta_, window_);
  }
  bool attendsWithoutMaps(const AttentionInputs& in) const override { return tiledSoftmaxApplies(in); }
  // Keys outside the window have a = 0, so the softmax backward gives them exactly zero gradient.
  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    softmaxDecodeRow(in, beta_, window_, o, weights);
    return true;
  }
  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    if (!saved.weights) tiledSoftmaxBackward(in, saved, g, beta_, window_);
    else softmaxAttentionBackward(in, saved, g, beta_);
  }

 private:
  float beta_ = 1.0f;
  int window_ = 16;
};

ATTNLAB_REGISTER(AttentionRegistry, "window", "a_ij = softmax_j(beta s_ij) over i - w < j <= i, 0 outside",
                 [] { return std::make_unique<WindowAttention>(); });

}  // namespace
}  // namespace attnlab
