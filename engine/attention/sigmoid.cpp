#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/attention.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);  // this form cannot overflow for very negative x
  return e / (1.0f + e);
}

// Sigmoid attention: a_ij = sigmoid(beta s_ij + b) g_j over visible keys j <= i, with no row normalisation: a row
// may carry any total weight in (0, i + 1). b = -log(i + 1) (the count of visible keys) keeps a row's
// total near 1 at initialisation; with sigmoid_bias_learned = 1, b is a learned scalar per head
// ("blocks.{l}.attn.sigmoid_bias", initialised to -log(context)).
class SigmoidAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {temperatureSetting(),
            {"sigmoid_bias_learned", 0, 0, 1, true, "1: b is a learned scalar per head; 0: b = -log(number of visible keys)"}};
  }
  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    const auto specs = settingSpecs();
    beta_ = static_cast<float>(settingOr(config.attention_settings, specs[0]));
    context_ = config.context;
    if (settingOr(config.attention_settings, specs[1]) != 0) bias_ = &params.add(prefix + "sigmoid_bias", {config.n_heads}, false);
    return {};
  }
  void initialise(Rng&) override {
    if (bias_) bias_->value.setConstant(-std::log(static_cast<float>(context_)));
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      causalScores(in, h, out.scores);  // S = scale Q K^T + bias, -inf above the diagonal
      const auto S = h.map(out.scores);
      auto A = h.map(out.weights);
      const float* gate = h.keyGate(in.key_gate);
      A.setZero();
      const bool vectorised = rowsVectorised(in);
      for (int i = 0; i < in.shape.T; ++i) {
        const float b = rowBias(h.h, i);
        if (vectorised) {  // 1 / (1 + exp(-x)) is 0 or 1 where exp overflows
          const auto x = beta_ * S.row(i).head(i + 1).array() + b;  // x = beta s + b
          A.row(i).head(i + 1) = (1.0f / (1.0f + (-x).exp())).matrix();
          continue;
        }
        for (int j = 0; j <= i; ++j) {
          const float x = roundTo(in.precision, beta_ * S(i, j) + b);                    // x = beta s + b
          A(i, j) = roundTo(in.precision, sigmoid(x)) * (gate ? gate[j] : 1.0f);  // a = sigmoid(x) g
        }
      }
      causalWeightedValues(h.map(static_cast<const float*>(out.weights)), h.v(in.v), h.out(out.o));  // O = A V
    });
  }

  // b = -log(query position + 1) as in training: a hard-evicted key simply stops contributing.
  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    const float b = rowBias(in.head, in.query_position);
    std::fill(o, o + in.dHead, 0.0f);
    for (int j = 0; j < in.n; ++j) {
      const float* k = in.k + static_cast<size_t>(j) * in.dHead;
      float dot = 0;
      for (int d = 0; d < in.dHead; ++d) dot += in.q[d] * k[d];
      float s = roundTo(in.precision, in.scale * dot);
      if (in.bias) s = in.precision == ScorePrecision::fp32 ? s + in.bias[j] : roundTo(in.precision, s + roundTo(in.precision, in.bias[j]));
      const float x = roundTo(in.precision, beta_ * s + b);
      weights[j] = roundTo(in.precision, sigmoid(x)) * (in.key_gate ? in.key_gate[j] : 1.0f);
      for (int d = 0; d < in.dHead; ++d) o[d] += weights[j] * in.v[static_cast<size_t>(j) * in.dHead + d];
    }
    return true;
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    std::vector<float> dBias(bias_ ? static_cast<size_t>(s.B) * s.H : 0, 0.0f);  // per (batch, head): no races
    backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
      const ConstHeadMat S = h.map(static_cast<const float*>(saved.scores));
      const float* gate = h.keyGate(in.key_gate);
      float* dGate = h.keyGate(g.d_key_gate);
      if (dGate) std::fill(dGate, dGate + s.T, 0.0f);
      float dBiasHead = 0;
      dS.setZero();
      const bool vectorised = rowsVectorised(in);
      for (int i = 0; i < s.T; ++i) {
        if (vectorised) {  // a = sigmoid(x) itself, unrounded: no recomputation
          const auto sig = A.row(i).head(i + 1).array();
          const auto dx = dA.row(i).head(i + 1).array() * sig * (1.0f - sig);  // from a = sigmoid(x)
          dS.row(i).head(i + 1) = (beta_ * dx).matrix();                         // from x = beta s + b
          if (bias_) dBiasHead += dx.sum();
          continue;
        }
        const float b = rowBias(h.h, i);
        for (int j = 0; j <= i; ++j) {
          const float sig = sigmoid(beta_ * S(i, j) + b);  // fp32 recomputation: straight-through for rounding
          if (dGate) dGate[j] += dA(i, j) * sig;         // from a = sigmoid(x) g
          const float dx = dA(i, j) * (gate ? gate[j] : 1.0f) * sig * (1.0f - sig);
          dS(i, j) = beta_ * dx;  // from x = beta s + b
          dBiasHead += dx;
        }
      }
      if (bias_) dBias[static_cast<size_t>(h.b) * s.H + h.h] = dBiasHead;
    });
    if (bias_)
      for (int b = 0; b < s.B; ++b)
        for (int h = 0; h < s.H; ++h) bias_->grad(0, h) += dBias[static_cast<size_t>(b) * s.H + h];
  }

 private:
  // Float32 scores without a key gate: whole rows at once, and the backward reads a = sigmoid(x)
  // from the saved weights (nothing rounded them) instead of recomputing it per element.
  static bool rowsVectorised(const AttentionInputs& in) { return !in.key_gate && in.precision == ScorePrecision::fp32; }

  float rowBias(int head, int row) const {
    return bias_ ? bias_->value(0, head) : -std::log(static_cast<float>(row + 1));
  }

  float beta_ = 1.0f;
  int context_ = 1;
  Param* bias_ = nullptr;  // learned b per head, or null for -log(n_visible)
};

ATTNLAB_REGISTER(AttentionRegistry, "sigmoid", "a_ij = sigmoid(beta s_ij + b), b = -log(i + 1) or learned per head; no normalisation",
                 [] { return std::make_unique<SigmoidAttention>(); });

}  // namespace
}  // namespace attnlab
