#include <cmath>
#include <limits>

#include "attention/attention.h"
#include "attention/head_loops.h"

namespace attnlab {
namespace {

// A1: a_ij = softmax_j(beta * s_ij + log g_j) over visible keys j <= i.
class SoftmaxAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {{"temperature", 1.0, 1e-3, 1e3, false, "beta: logits are beta * s (larger is sharper)"}};
  }
  std::string configure(const ModelConfig& config, const std::string&, ParamStore&) override {
    beta_ = static_cast<float>(settingOr(config.attention_settings, settingSpecs()[0]));
    return {};
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      causalScores(in, h, out.scores);  // S = Q K^T * scale + bias, -inf above the diagonal
      auto S = h.map(out.scores);
      auto A = h.map(out.weights);
      const float* gate = h.keyGate(in.key_gate);
      const int T = in.shape.T;
      for (int i = 0; i < T; ++i) {
        float maxLogit = -std::numeric_limits<float>::infinity();
        for (int j = 0; j <= i; ++j) {
          const float z = beta_ * S(i, j) + (gate ? std::log(gate[j]) : 0.0f);
          A(i, j) = z;
          maxLogit = std::max(maxLogit, z);
        }
        float sum = 0;
        for (int j = 0; j <= i; ++j) sum += (A(i, j) = std::exp(A(i, j) - maxLogit));
        const float inv = sum > 0 ? 1.0f / sum : 0.0f;
        for (int j = 0; j <= i; ++j) A(i, j) *= inv;
        for (int j = i + 1; j < T; ++j) A(i, j) = 0.0f;
      }
      h.out(out.o).noalias() = A * h.v(in.v);  // O = A V
    });
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
      // z = beta s + log g; a = softmax(z)  =>  dz = a (dA - rowsum(a dA)); ds = beta dz; dg_j = sum_i dz_ij / g_j
      const auto rowDot = (A.array() * dA.array()).rowwise().sum().eval();
      dS = (A.array() * (dA.array().colwise() - rowDot)).matrix();
      if (g.d_key_gate) {
        const float* gate = h.keyGate(in.key_gate);
        float* dGate = h.keyGate(g.d_key_gate);
        const auto colSum = dS.colwise().sum().eval();
        for (int j = 0; j < in.shape.T; ++j) dGate[j] = colSum[j] / gate[j];
      }
      dS *= beta_;
    });
  }

 private:
  float beta_ = 1.0f;
};

ATTNLAB_REGISTER(AttentionRegistry, "softmax", "a_ij = exp(beta s_ij) / sum_j' exp(beta s_ij'), j <= i",
                 [] { return std::make_unique<SoftmaxAttention>(); });

}  // namespace
}  // namespace attnlab
