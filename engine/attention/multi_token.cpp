#include <cmath>
#include <vector>

#include "attention/attention.h"
#include "attention/head_loops.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

const SettingSpec kQueryWidth{"mta_query_width", 3, 1, 8, true, "c_q: the kernel reaches this many queries back (the query itself included)"};
const SettingSpec kKeyWidth{"mta_key_width", 3, 1, 8, true, "c_k: the kernel reaches this many keys back (the key itself included)"};

// Multi-token attention: a small causal convolution over the score map before the
// softmax, one kernel per head, "blocks.{l}.attn.mta_kernel" [H, c_q x c_k] (initial: the identity,
// theta_{0,0} = 1; not decayed):
//   s~_ij = sum_{a < c_q, b < c_k} theta_{h,a,b} s0_{i-a, j-b},   a_ij = softmax_j(beta s~_ij + log g_j), j <= i,
// where s = scale q.k + bias and s0 is s with every masked (j > i) or out-of-range cell read as 0.
// The kernel looks only at earlier queries and earlier keys, so a later token never changes an earlier
// output, and the identity kernel is softmax. The scores in the trace are s~. Decoding would need
// the earlier queries' scores against every new key: not from a KV cache, so it is refused.
class MultiTokenAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {temperatureSetting(), kQueryWidth, kKeyWidth}; }
  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    const auto specs = settingSpecs();
    beta_ = static_cast<float>(settingOr(config.attention_settings, specs[0]));
    cq_ = static_cast<int>(settingOr(config.attention_settings, kQueryWidth));
    ck_ = static_cast<int>(settingOr(config.attention_settings, kKeyWidth));
    kernel_ = &params.add(prefix + "mta_kernel", {config.n_heads, cq_ * ck_}, false);
    return {};
  }
  void initialise(Rng&) override {
    kernel_->value.setZero();
    kernel_->value.col(0).setOnes();  // theta_{h,0,0} = 1: the identity
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      causalScores(in, h, out.scores);  // S = scale Q K^T + bias, -inf above the diagonal
      auto S = h.map(out.scores);
      const Mat convolved = convolve(zeroMasked(Mat(S)), h.h);  // s~ = theta * s0
      S = convolved;
      for (int i = 0; i < in.shape.T; ++i) S.row(i).tail(in.shape.T - 1 - i).setConstant(-std::numeric_limits<float>::infinity());
      maskedSoftmaxHead(S, h.map(out.weights), beta_, h.keyGate(in.key_gate), 0, in.precision);
      causalWeightedValues(h.map(static_cast<const float*>(out.weights)), h.v(in.v), h.out(out.o));
    });
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    const int T = s.T;
    std::vector<float> raw(s.mapSize());  // the unconvolved scores, recomputed head by head
    std::vector<Mat> dKernel(static_cast<size_t>(s.B) * s.H);  // per (batch, head): no races
    backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
      // from a = softmax(z), z = beta s~ + log g (as softmaxAttentionBackward)
      const auto rowDot = (A.array() * dA.array()).rowwise().sum().eval();
      Mat dConv = (A.array() * (dA.array().colwise() - rowDot)).matrix();
      if (g.d_key_gate) {
        const float* gate = h.keyGate(in.key_gate);
        float* dGate = h.keyGate(g.d_key_gate);
        const auto colSum = dConv.colwise().sum().eval();
        for (int j = 0; j < T; ++j) dGate[j] = colSum[j] / gate[j];
      }
      dConv *= beta_;
      causalScores(in, h, raw.data());
      const Mat S0 = zeroMasked(Mat(h.map(static_cast<const float*>(raw.data()))));
      Mat& dTheta = dKernel[static_cast<size_t>(h.b) * s.H + h.h];
      dTheta = Mat::Zero(1, cq_ * ck_);
      dS.setZero();
      const float* theta = kernel_->value.row(h.h).data();
      for (int a = 0; a < cq_; ++a)
        for (int b = 0; b < ck_; ++b)
          for (int i = a; i < T; ++i)
            for (int j = b; j <= i; ++j) {  // s~_ij += theta_ab s0_{i-a, j-b}; s0 is 0 where j - b > i - a
              if (j - b > i - a) continue;
              dTheta(0, a * ck_ + b) += dConv(i, j) * S0(i - a, j - b);
              dS(i - a, j - b) += theta[a * ck_ + b] * dConv(i, j);
            }
    });
    for (size_t slot = 0; slot < dKernel.size(); ++slot) kernel_->grad.row(static_cast<Eigen::Index>(slot % s.H)) += dKernel[slot];
  }

 private:
  static Mat zeroMasked(const Mat& S) {
    Mat out = S;
    for (Eigen::Index i = 0; i < out.rows(); ++i) out.row(i).tail(out.cols() - 1 - i).setZero();
    return out;
  }
  Mat convolve(const Mat& S0, int head) const {
    const int T = static_cast<int>(S0.rows());
    const float* theta = kernel_->value.row(head).data();
    Mat out = Mat::Zero(T, T);
    for (int a = 0; a < cq_; ++a)
      for (int b = 0; b < ck_; ++b) {
        const float w = theta[a * ck_ + b];
        if (w == 0) continue;
        for (int i = a; i < T; ++i)
          for (int j = b; j <= i; ++j) out(i, j) += w * S0(i - a, j - b);
      }
    return out;
  }

  float beta_ = 1.0f;
  int cq_ = 3, ck_ = 3;
  Param* kernel_ = nullptr;
};

ATTNLAB_REGISTER(AttentionRegistry, "multi_token",
                 "a_ij = softmax_j(sum_{a<c_q,b<c_k} theta_{h,a,b} s_{i-a,j-b}): a learned causal convolution over the score map",
                 [] { return std::make_unique<MultiTokenAttention>(); });

}  // namespace
}  // namespace attnlab
