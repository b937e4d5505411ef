#include <cmath>
#include <limits>
#include <vector>

#include "attention/attention.h"
#include "attention/softmax_core.h"
#include "attention/presence.h"

namespace attnlab {
namespace {

// OAttention (presence-coupled attention). With presence p = ||h||^2 / (tau + ||h||^2) of each
// token's block input h (computed by the layer, model/gates.h):
//   o_i = p_i * sum_j p_j exp(beta s_ij) v_j / sum_j p_j exp(beta s_ij),  j <= i,
// and o_i = 0 when every visible source has p_j = 0 (empty support). The layer passes p_j as the key
// gate, so this is softmax over z_ij = beta s_ij + log p_j with log 0 = -inf giving weight exactly 0,
// and the layer multiplies o_i by p_i (receiver presence).
// Exactness: every s_ij and o_i is accumulated in index order over d and j, the same operations
// whatever the other tokens are (Eigen's blocked products round rows by their place in the block),
// so an inserted zero-carrier source changes no other output by a single bit: it only adds exact
// zeros (a zero weight into the row sum and 0 * v_j into o_i). The layer projects with the
// row-stable product for the same reason (model/row_stable.h).
class OAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {temperatureSetting(), presenceTauSpec()}; }
  std::string configure(const ModelConfig& config, const std::string&, ParamStore&) override {
    beta_ = static_cast<float>(settingOr(config.attention_settings, temperatureSetting()));
    return {};
  }
  bool needsPresence() const override { return true; }
  // The layer hands p_j (times any retention gate) as the key gate and applies p_i to the output.
  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    softmaxDecodeRow(in, beta_, 0, o, weights);
    return true;
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    const int T = in.shape.T, dHead = in.shape.dHead;
    forEachHead(in.shape, [&](const HeadSlices& h) {
      const ConstHeadMat Q = h.q(in.q), V = h.v(in.v);
      const Mat Kt = h.k(in.k).transpose();  // [d_head, T]: the score loop runs over contiguous keys
      auto S = h.map(out.scores);
      auto O = h.out(out.o);
      const float* bias = h.bias(in.bias);
      for (int i = 0; i < T; ++i) {
        float* s = &S(i, 0);
        std::fill(s, s + i + 1, 0.0f);
        for (int d = 0; d < dHead; ++d) {  // s_ij = q_i . k_j over d in order
          const float qd = Q(i, d);
          const float* kd = &Kt(d, 0);
          for (int j = 0; j <= i; ++j) s[j] += qd * kd[j];
        }
        for (int j = 0; j <= i; ++j) {  // s = scale q.k + b, rounded as causalScores rounds it
          const float product = roundTo(in.precision, in.scale * s[j]);
          s[j] = bias ? roundTo(in.precision, product + roundTo(in.precision, bias[i * T + j])) : product;
        }
        for (int j = i + 1; j < T; ++j) s[j] = -std::numeric_limits<float>::infinity();
      }
      // a_ij = softmax_j(beta s_ij + log p_j): absent sources (p_j = 0) get exactly 0, empty rows all 0
      maskedSoftmaxHead(S, h.map(out.weights), beta_, h.keyGate(in.key_gate), 0, in.precision);
      const ConstHeadMat A = h.map(static_cast<const float*>(out.weights));
      for (int i = 0; i < T; ++i) {  // o_i = sum_j a_ij v_j, over j in order
        float* o = &O(i, 0);
        std::fill(o, o + dHead, 0.0f);
        for (int j = 0; j <= i; ++j) {
          const float a = A(i, j);
          const float* v = V.data() + static_cast<size_t>(j) * dHead;
          for (int d = 0; d < dHead; ++d) o[d] += a * v[d];
        }
      }
    });
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
      // from a = softmax(z): dz = a (dA - rowsum(a dA)); zero wherever a is (masked or absent keys)
      const Eigen::ArrayXf rowDot = (A.array() * dA.array()).rowwise().sum();
      dS = (A.array() * (dA.array().colwise() - rowDot)).matrix();
      if (g.d_key_gate)
        presenceGradient(h.map(static_cast<const float*>(saved.scores)), h.keyGate(in.key_gate), dA, rowDot, dS,
                         h.keyGate(g.d_key_gate));
      dS *= beta_;  // from z = beta s
    });
  }

 private:
  // From z_ij = beta s_ij + log p_j: dp_j = sum_i dz_ij / p_j = sum_i e_ij (dA_ij - r_i), where
  // e_ij = a_ij / p_j = exp(beta s_ij) / sum_k p_k exp(beta s_ik). For an absent source (p_j = 0)
  // a_ij is 0, so e_ij comes from the row's normaliser rather than 0 / 0. A row with empty support
  // contributes 0: its output jumps from 0 as soon as some p_j turns positive (no derivative there).
  void presenceGradient(const ConstHeadMat& S, const float* p, const HeadMat& dA, const Eigen::ArrayXf& rowDot,
                        const HeadMat& dZ, float* dp) const {
    const int T = static_cast<int>(S.rows());
    const Eigen::RowVectorXf colSum = dZ.colwise().sum();
    std::vector<float> logNorm;  // log sum_k p_k exp(beta s_ik) per row, only when some source is absent
    for (int j = 0; j < T; ++j) {
      if (p[j] > 0) {
        dp[j] = colSum[j] / p[j];
        continue;
      }
      if (logNorm.empty()) logNorm = rowLogNormalisers(S, p);
      float sum = 0;
      for (int i = j; i < T; ++i)
        if (std::isfinite(logNorm[i])) sum += std::exp(beta_ * S(i, j) - logNorm[i]) * (dA(i, j) - rowDot[i]);
      dp[j] = sum;
    }
  }

  // -inf for a row whose visible sources are all absent.
  std::vector<float> rowLogNormalisers(const ConstHeadMat& S, const float* p) const {
    const int T = static_cast<int>(S.rows());
    std::vector<float> out(T);
    for (int i = 0; i < T; ++i) {
      float maxLogit = -std::numeric_limits<float>::infinity();
      for (int j = 0; j <= i; ++j) maxLogit = std::max(maxLogit, beta_ * S(i, j) + std::log(p[j]));
      float sum = 0;
      if (std::isfinite(maxLogit))
        for (int j = 0; j <= i; ++j) sum += std::exp(beta_ * S(i, j) + std::log(p[j]) - maxLogit);
      out[i] = std::isfinite(maxLogit) ? maxLogit + std::log(sum) : maxLogit;
    }
    return out;
  }

  float beta_ = 1.0f;
};

ATTNLAB_REGISTER(AttentionRegistry, "oattention",
                 "o_i = p_i sum_j p_j exp(beta s_ij) v_j / sum_j p_j exp(beta s_ij), p = ||h||^2 / (tau + ||h||^2)",
                 [] { return std::make_unique<OAttention>(); });

}  // namespace
}  // namespace attnlab
