#include <cmath>
#include <vector>

#include "attention/attention.h"
#include "attention/softmax_core.h"

namespace attnlab {
namespace {

float signOf(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }  // the subgradient 0 at a tie

// L1-augmented score: s_ij = q_i.k_j / sqrt(d_head) + bias_ij - lambda_h |P_h q_i - P_h k_j|_1, then softmax over
// j <= i. P_h is a learned r x d_head projection per head ("blocks.{l}.attn.l1_proj", [H, r, d_head])
// and lambda_h = exp(u_h) >= 0 a learned weight per head ("blocks.{l}.attn.l1_log_lambda", initial
// lambda 0.1): the dot product rewards alignment, the L1 term penalises distance in a small subspace.
class L1ScoreAttention : public AttentionVariant {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    return {temperatureSetting(), {"l1_rank", 4, 1, 256, true, "r: dimensions of the subspace P_h in which the L1 distance is measured"}};
  }
  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    const auto specs = settingSpecs();
    beta_ = static_cast<float>(settingOr(config.attention_settings, specs[0]));
    rank_ = static_cast<int>(settingOr(config.attention_settings, specs[1]));
    dHead_ = config.headDim();
    proj_ = &params.add(prefix + "l1_proj", {config.n_heads, rank_, dHead_});
    logLambda_ = &params.add(prefix + "l1_log_lambda", {config.n_heads}, false);
    return {};
  }
  void initialise(Rng& rng) override {
    const float std = 1.0f / std::sqrt(static_cast<float>(dHead_));
    for (Eigen::Index i = 0; i < proj_->value.size(); ++i) proj_->value.data()[i] = rng.normal(0.f, std);
    logLambda_->value.setConstant(std::log(0.1f));
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      causalScores(in, h, out.scores);  // S = scale Q K^T + bias
      auto S = h.map(out.scores);
      const Mat pq = projected(h.q(in.q), h.h), pk = projected(h.k(in.k), h.h);
      const float lambda = lambdaOf(h.h);
      for (int i = 0; i < in.shape.T; ++i)
        for (int j = 0; j <= i; ++j) {
          const float penalty = lambda * (pq.row(i) - pk.row(j)).cwiseAbs().sum();  // lambda |P q_i - P k_j|_1
          S(i, j) = in.precision == ScorePrecision::fp32 ? S(i, j) - penalty
                                                         : roundTo(in.precision, S(i, j) - roundTo(in.precision, penalty));
        }
      maskedSoftmaxHead(S, h.map(out.weights), beta_, h.keyGate(in.key_gate), 0, in.precision);
      causalWeightedValues(h.map(static_cast<const float*>(out.weights)), h.v(in.v), h.out(out.o));
    });
  }

  // The L1 term joins the positional bias: s_j = scale q.k_j + (b_j - lambda |P q - P k_j|_1).
  bool decodeRow(const DecodeRowInputs& in, float* o, float* weights) const override {
    const int d = in.dHead;
    const Eigen::Map<const Mat> P(proj_->value.data() + static_cast<size_t>(in.head) * rank_ * d, rank_, d);
    const Vec pq = P * Eigen::Map<const Vec>(in.q, d);
    std::vector<float> bias(in.n);
    for (int j = 0; j < in.n; ++j) {
      const Vec pk = P * Eigen::Map<const Vec>(in.k + static_cast<size_t>(j) * d, d);
      bias[j] = (in.bias ? in.bias[j] : 0.0f) - lambdaOf(in.head) * (pq - pk).cwiseAbs().sum();
    }
    DecodeRowInputs row = in;
    row.bias = bias.data();
    softmaxDecodeRow(row, beta_, 0, o, weights);
    return true;
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    const int T = s.T, d = s.dHead, r = rank_;
    // The L1 term's own paths into q and k, added after backwardFromWeights has written d_q and d_k (=).
    std::vector<float> extraDq(s.qSize(), 0.0f), extraDk(s.kvSize(), 0.0f);
    std::vector<Mat> dProj(static_cast<size_t>(s.B) * s.H, Mat::Zero(r, d));  // per (batch, head): no races
    std::vector<double> dLogLambda(static_cast<size_t>(s.B) * s.H, 0.0);
    backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
      // from a = softmax(z), z = beta s + log g (as softmaxAttentionBackward)
      const auto rowDot = (A.array() * dA.array()).rowwise().sum().eval();
      dS = (A.array() * (dA.array().colwise() - rowDot)).matrix();
      if (g.d_key_gate) {
        const float* gate = h.keyGate(in.key_gate);
        float* dGate = h.keyGate(g.d_key_gate);
        const auto colSum = dS.colwise().sum().eval();
        for (int j = 0; j < T; ++j) dGate[j] = colSum[j] / gate[j];
      }
      dS *= beta_;
      // from s -= lambda D, D_ij = sum_m |pq_im - pk_jm|, pq = Q P^T, pk = K P^T
      const ConstHeadMat Q = h.q(in.q), K = h.k(in.k);
      const Mat pq = projected(Q, h.h), pk = projected(K, h.h);
      const float lambda = lambdaOf(h.h);
      Mat dPq = Mat::Zero(T, r), dPk = Mat::Zero(T, r);
      double dLambda = 0;
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i; ++j) {
          const float dD = -lambda * dS(i, j);
          if (dD == 0) continue;
          dLambda -= static_cast<double>(dS(i, j)) * (pq.row(i) - pk.row(j)).cwiseAbs().sum();
          for (int m = 0; m < r; ++m) {
            const float sg = signOf(pq(i, m) - pk(j, m));
            dPq(i, m) += dD * sg;
            dPk(j, m) -= dD * sg;
          }
        }
      const Eigen::Map<const Mat> P(proj_->value.data() + static_cast<size_t>(h.h) * r * d, r, d);
      h.out(extraDq.data()).noalias() = dPq * P;     // from pq = Q P^T
      h.kvOut(extraDk.data()).noalias() += dPk * P;  // from pk = K P^T (query heads of a group add up)
      const size_t bh = static_cast<size_t>(h.b) * s.H + h.h;
      dProj[bh].noalias() = dPq.transpose() * Q + dPk.transpose() * K;
      dLogLambda[bh] = dLambda * lambda;  // from lambda = exp(u)
    });
    for (size_t i = 0; i < extraDq.size(); ++i) g.d_q[i] += extraDq[i];
    for (size_t i = 0; i < extraDk.size(); ++i) g.d_k[i] += extraDk[i];
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < s.H; ++h) {
        const size_t bh = static_cast<size_t>(b) * s.H + h;
        Eigen::Map<Mat>(proj_->grad.data() + static_cast<size_t>(h) * r * d, r, d) += dProj[bh];
        logLambda_->grad(0, h) += static_cast<float>(dLogLambda[bh]);
      }
  }

 private:
  float lambdaOf(int head) const { return std::exp(logLambda_->value(0, head)); }
  Mat projected(const ConstHeadMat& X, int head) const {  // X P_h^T: [T, r]
    const Eigen::Map<const Mat> P(proj_->value.data() + static_cast<size_t>(head) * rank_ * dHead_, rank_, dHead_);
    return X * P.transpose();
  }

  float beta_ = 1.0f;
  int rank_ = 4, dHead_ = 1;
  Param* proj_ = nullptr;
  Param* logLambda_ = nullptr;
};

ATTNLAB_REGISTER(AttentionRegistry, "l1_score",
                 "s_ij = q.k/sqrt(d) - lambda_h |P_h q_i - P_h k_j|_1 (P_h r x d_head, lambda_h >= 0 learned), then softmax",
                 [] { return std::make_unique<L1ScoreAttention>(); });

}  // namespace
}  // namespace attnlab
