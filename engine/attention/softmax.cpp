#include "attention/attention.h"
#include "attention/softmax_core.h"
#include "attention/softmax_tiled.h"

namespace attnlab {
namespace {

// Softmax attention: a_ij = softmax_j(beta * s_ij + log g_j) over visible keys j <= i (math in softmax_core.h).
class SoftmaxAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {temperatureSetting()}; }
  std::string configure(const ModelConfig& config, const std::string&, ParamStore&) override {
    beta_ = static_cast<float>(settingOr(config.attention_settings, settingSpecs()[0]));
    return {};
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    if (!out.weights) tiledSoftmaxForward(in, out, beta_, 0);
    else softmaxAttentionForward(in, out, beta_, 0);
  }
  bool attendsWithoutMaps(const AttentionInputs& in) const override { return tiledSoftmaxApplies(in); }
  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    softmaxDecodeRow(in, beta_, 0, o, weights);
    return true;
  }
  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    if (!saved.weights) tiledSoftmaxBackward(in, saved, g, beta_, 0);
    else softmaxAttentionBackward(in, saved, g, beta_);
  }

 private:
  float beta_ = 1.0f;
};

ATTNLAB_REGISTER(AttentionRegistry, "softmax", "a_ij = exp(beta s_ij) / sum_j' exp(beta s_ij'), j <= i",
                 [] { return std::make_unique<SoftmaxAttention>(); });

}  // namespace
}  // namespace attnlab
