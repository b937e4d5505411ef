#include <cmath>
#include <vector>

#include "attention/attention.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

constexpr float kNormEps = 1e-12f;  // |x| -> sqrt(|x|^2 + eps): a zero vector scores 0, not NaN

// Writes y_r = x_r / |x_r| for the `rows` rows of length d, and r_r = 1 / |x_r|.
void normaliseRows(const float* x, int rows, int d, float* y, float* inverseNorm) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * d;
    float sq = 0;
    for (int c = 0; c < d; ++c) sq += xr[c] * xr[c];
    const float inv = 1.0f / std::sqrt(sq + kNormEps);
    inverseNorm[r] = inv;
    for (int c = 0; c < d; ++c) y[static_cast<size_t>(r) * d + c] = xr[c] * inv;  // y = x / |x|
  }
}

// Backward of y = x / |x| for one row: dx = (dy - y (y.dy)) / |x|.
void normaliseRowBackward(const float* y, float inverseNorm, const float* dy, int d, float* dx) {
  float dot = 0;
  for (int c = 0; c < d; ++c) dot += y[c] * dy[c];
  for (int c = 0; c < d; ++c) dx[c] = (dy[c] - y[c] * dot) * inverseNorm;
}

// QK-norm: s_ij = tau_h (q_i/|q_i|).(k_j/|k_j|) + bias_ij, a_ij = softmax_j(s_ij + log g_j). tau_h is
// learned per head ("blocks.{l}.attn.qk_norm_tau", initial sqrt(d_head)), so |s_ij| <= tau_h
// before any positional bias and no growth of |q| or |k| can sharpen the map. Computed as
// softmax attention on q' = tau_h q/|q| and k' = k/|k| at scale 1, whose backward
// (softmax_core.h) gives dq' and dk'; this file adds the chain through tau and the norms.
class QkNormAttention : public AttentionVariant {
 public:
  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    dHead_ = config.headDim();
    tau_ = &params.add(prefix + "qk_norm_tau", {config.n_heads}, false);
    return {};
  }
  void initialise(Rng&) override { tau_->value.setConstant(std::sqrt(static_cast<float>(dHead_))); }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    Normalised n = normalise(in);
    softmaxAttentionForward(n.inputs(in), out, 1.0f, 0);
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    Normalised n = normalise(in);
    softmaxAttentionBackward(n.inputs(in), saved, g, 1.0f);  // g.d_q = dq', g.d_k = dk'
    const int d = s.dHead;
    std::vector<float> dqHat(d);
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < s.H; ++h) {
        const float tau = tau_->value(0, h);
        double dTau = 0;
        for (int t = 0; t < s.T; ++t) {
          const size_t row = (static_cast<size_t>(b * s.H + h) * s.T + t);
          const float* qHat = n.qHat.data() + row * d;
          float* dq = g.d_q + row * d;
          for (int c = 0; c < d; ++c) {
            dTau += static_cast<double>(dq[c]) * qHat[c];  // from q' = tau qHat
            dqHat[c] = tau * dq[c];
          }
          normaliseRowBackward(qHat, n.qInverseNorm[row], dqHat.data(), d, dq);  // from qHat = q / |q|
        }
        tau_->grad(0, h) += static_cast<float>(dTau);
      }
    std::vector<float> dkHat(d);
    for (size_t row = 0; row < static_cast<size_t>(s.B) * s.Hkv * s.T; ++row) {
      float* dk = g.d_k + row * d;
      std::copy(dk, dk + d, dkHat.begin());
      normaliseRowBackward(n.kHat.data() + row * d, n.kInverseNorm[row], dkHat.data(), d, dk);  // from k' = k / |k|
    }
  }

  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    const int d = in.dHead;
    std::vector<float> q(d), k(static_cast<size_t>(in.n) * d), inverse(std::max(in.n, 1));
    normaliseRows(in.q, 1, d, q.data(), inverse.data());
    for (float& x : q) x *= tau_->value(0, in.head);
    normaliseRows(in.k, in.n, d, k.data(), inverse.data());
    DecodeRowInputs row = in;
    row.q = q.data();
    row.k = k.data();
    row.scale = 1.0f;
    softmaxDecodeRow(row, 1.0f, 0, o, weights);
    return true;
  }

 private:
  // q' = tau_h q/|q| [B, H, T, d], k' = k/|k| [B, Hkv, T, d], and what the backward needs.
  struct Normalised {
    std::vector<float> qScaled, qHat, qInverseNorm, kHat, kInverseNorm;
    AttentionInputs inputs(const AttentionInputs& in) const {
      AttentionInputs out = in;
      out.q = qScaled.data();
      out.k = kHat.data();
      out.scale = 1.0f;
      return out;
    }
  };
  Normalised normalise(const AttentionInputs& in) const {
    const AttentionShape& s = in.shape;
    const int qRows = s.B * s.H * s.T, kRows = s.B * s.Hkv * s.T;
    Normalised n{std::vector<float>(s.qSize()), std::vector<float>(s.qSize()), std::vector<float>(qRows),
                 std::vector<float>(s.kvSize()), std::vector<float>(kRows)};
    normaliseRows(in.q, qRows, s.dHead, n.qHat.data(), n.qInverseNorm.data());
    normaliseRows(in.k, kRows, s.dHead, n.kHat.data(), n.kInverseNorm.data());
    for (int row = 0; row < qRows; ++row) {
      const float tau = tau_->value(0, (row / s.T) % s.H);
      for (int c = 0; c < s.dHead; ++c) {
        const size_t i = static_cast<size_t>(row) * s.dHead + c;
        n.qScaled[i] = tau * n.qHat[i];  // q' = tau qHat
      }
    }
    return n;
  }

  int dHead_ = 1;
  Param* tau_ = nullptr;
};

ATTNLAB_REGISTER(AttentionRegistry, "qk_norm", "a_ij = softmax_j(tau_h (q_i/|q_i|).(k_j/|k_j|)), tau_h learned (initial sqrt(d_head))",
                 [] { return std::make_unique<QkNormAttention>(); });

}  // namespace
}  // namespace attnlab
