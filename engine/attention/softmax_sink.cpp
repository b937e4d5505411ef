#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/attention.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

// One row of the sink softmax: logits z_j (overwritten with a_j) over n keys and the sink logit
// zSink: a_j = exp(z_j - m) / (exp(zSink - m) + sum_j' exp(z_j' - m)), m = max(zSink, max_j z_j).
// The sink is a key with no value: it takes weight without adding to the output.
void sinkSoftmaxRow(float* z, int n, float zSink, ScorePrecision precision) {
  float m = zSink;
  for (int j = 0; j < n; ++j) m = std::isnan(z[j]) ? z[j] : std::max(m, z[j]);  // a NaN reaches the loss
  float sum = roundTo(precision, std::exp(zSink - m));  // the sink's share, >= 0; exactly 0 as zSink -> -inf
  for (int j = 0; j < n; ++j) sum += (z[j] = roundTo(precision, std::exp(z[j] - m)));
  const float inv = 1.0f / sum;  // sum >= 1: the largest logit (or the sink) contributes exp(0)
  for (int j = 0; j < n; ++j) z[j] *= inv;
}

// Learnable sink: a_ij = exp(beta s_ij + log g_j) / (exp(z_h) + sum_j' exp(beta s_ij' + log g_j')), j <= i,
// with z_h a learned logit per head ("blocks.{l}.attn.sink_logit", initial 0). A row sums to
// 1 - a_sink, so a head can attend to nothing instead of dumping weight on the first token;
// z_h -> -inf gives softmax.
class SoftmaxSinkAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {temperatureSetting()}; }
  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    beta_ = static_cast<float>(settingOr(config.attention_settings, settingSpecs()[0]));
    sink_ = &params.add(prefix + "sink_logit", {config.n_heads}, false);
    return {};
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      causalScores(in, h, out.scores);  // S = scale Q K^T + bias, -inf above the diagonal
      const ConstHeadMat S = h.map(static_cast<const float*>(out.scores));
      auto A = h.map(out.weights);
      const float* gate = h.keyGate(in.key_gate);
      A.setZero();
      std::vector<float> row(in.shape.T);
      for (int i = 0; i < in.shape.T; ++i) {
        for (int j = 0; j <= i; ++j) row[j] = roundTo(in.precision, beta_ * S(i, j) + (gate ? std::log(gate[j]) : 0.0f));  // z = beta s + log g
        sinkSoftmaxRow(row.data(), i + 1, sinkLogit(h.h), in.precision);
        for (int j = 0; j <= i; ++j) A(i, j) = row[j];
      }
      causalWeightedValues(h.map(static_cast<const float*>(out.weights)), h.v(in.v), h.out(out.o));  // O = A V
    });
  }

  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    for (int j = 0; j < in.n; ++j) {
      float dot = 0;
      for (int d = 0; d < in.dHead; ++d) dot += in.q[d] * in.k[static_cast<size_t>(j) * in.dHead + d];
      float s = roundTo(in.precision, in.scale * dot);
      if (in.bias) s = in.precision == ScorePrecision::fp32 ? s + in.bias[j] : roundTo(in.precision, s + roundTo(in.precision, in.bias[j]));
      weights[j] = roundTo(in.precision, beta_ * s + (in.key_gate ? std::log(in.key_gate[j]) : 0.0f));
    }
    sinkSoftmaxRow(weights, in.n, sinkLogit(in.head), in.precision);
    std::fill(o, o + in.dHead, 0.0f);
    for (int j = 0; j < in.n; ++j)
      for (int d = 0; d < in.dHead; ++d) o[d] += weights[j] * in.v[static_cast<size_t>(j) * in.dHead + d];
    return true;
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    std::vector<double> dSink(static_cast<size_t>(s.B) * s.H, 0.0);  // per (batch, head): no races
    backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
      // The sink is one more key, with weight a_sink = 1 - sum_j a_ij and no value (its dA is 0):
      // dz_ij = a_ij (dA_ij - sum_j' a_ij' dA_ij'), dz_sink = a_sink (0 - sum_j' a_ij' dA_ij').
      const auto rowDot = (A.array() * dA.array()).rowwise().sum().eval();
      const auto rowMass = A.rowwise().sum().eval();
      dS = (A.array() * (dA.array().colwise() - rowDot)).matrix();
      double dz = 0;
      for (int i = 0; i < s.T; ++i) dz -= static_cast<double>(1.0f - rowMass[i]) * rowDot[i];
      dSink[static_cast<size_t>(h.b) * s.H + h.h] = dz;
      if (g.d_key_gate) {  // from z = ... + log g_j: dg_j = sum_i dz_ij / g_j
        const float* gate = h.keyGate(in.key_gate);
        float* dGate = h.keyGate(g.d_key_gate);
        const auto colSum = dS.colwise().sum().eval();
        for (int j = 0; j < s.T; ++j) dGate[j] = colSum[j] / gate[j];
      }
      dS *= beta_;  // from z = beta s
    });
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < s.H; ++h) sink_->grad(0, h) += static_cast<float>(dSink[static_cast<size_t>(b) * s.H + h]);
  }

 private:
  float sinkLogit(int head) const { return sink_->value(0, head); }

  float beta_ = 1.0f;
  Param* sink_ = nullptr;
};

ATTNLAB_REGISTER(AttentionRegistry, "softmax_sink",
                 "a_ij = exp(s_ij) / (exp(z_h) + sum_j' exp(s_ij')), z_h a learned sink logit per head",
                 [] { return std::make_unique<SoftmaxSinkAttention>(); });

}  // namespace
}  // namespace attnlab
