#pragma once
// The delta rule: DeltaNet and gated DeltaNet, shared by deltanet.cpp and gated_deltanet.cpp.
// Per head a state S [d_head x d_head] is updated by the delta rule with unit-norm keys k^_t:
//   S_t = alpha_t S_{t-1} (I - beta_t k^_t k^_t^T) + beta_t v_t k^_t^T,   o_t = S_t q_t,
// beta_t = sigmoid(w_b . k_t + c_b) g_t (g_t the key gate, 1 without one), alpha_t = 1 (plain) or
// sigmoid(w_a . k_t + c_a) (gated). The gates read the head's raw key k_t = W_k x_t: a learned
// linear function of x_t, as the papers' w . x_t, restricted to the key projection's row space
// (a variant sees only the layer's q, k, v). Parameters per query head: blocks.{l}.attn.delta_beta_w
// [H, d_head] and delta_beta_b [H] (initial 0: beta = 1/2), gated also delta_alpha_w and delta_alpha_b
// (initial 3: alpha = 0.95).
//
// Parallel form (training and the views). Writing the update as S_t = alpha_t S_{t-1} + u_t k^_t^T
// with the pseudo-value u_t = beta_t (v_t - alpha_t S_{t-1} k^_t) gives S_t = sum_{j<=t} G_tj u_j k^_j^T,
// G_tj = prod_{j<m<=t} alpha_m, hence
//   U = M^-1 D V,  M = I + D (G o strict_lower(K^ K^^T)),  D = diag(beta),
//   O = P U,       P = G o lower(Q K^^T)  (o: elementwise; lower keeps j <= i),
// so O = A V with A = P M^-1 D, a lower-triangular map: the weights the views draw (rows need not
// sum to 1). The scores are P (-inf above the diagonal). Recurrent form (decoding): DeltaState below.
// Rotary encodings and score biases do not apply (no softmax over q.k); neither does an emulated
// score precision (no scores are exponentiated: everything stays float32).
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "attention/attention.h"
#include "attention/head_loops.h"
#include "attention/recurrent_state.h"

namespace attnlab {

namespace delta {

constexpr float kNormEps = 1e-12f;  // |k| -> sqrt(|k|^2 + eps): a zero key stays 0, not NaN
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float logSigmoid(float x) { return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }

// The learned gate of one query head: sigmoid(w . k + c), read from the parameters as they are now.
struct Gate {
  const float* w = nullptr;  // [d_head]
  const float* c = nullptr;
  float logit(const float* k, int d) const {
    float z = *c;
    for (int i = 0; i < d; ++i) z += w[i] * k[i];
    return z;
  }
};

// Everything one head's forward computes, kept for its backward.
struct HeadPass {
  Mat Kn;       // [T, d] unit keys k^ = k / |k|
  Vec invNorm;  // [T] 1 / |k|
  Vec sigBeta, beta;  // [T] sigmoid(z_b), and beta = sigmoid(z_b) g
  Vec sigAlpha;       // [T] sigmoid(z_a) (gated only)
  Mat decay;    // [T, T] G_ij for j <= i, else 0
  Mat keyDots;  // [T, T] K^ K^^T
  Mat qkDots;   // [T, T] Q K^^T
  Mat X;        // [T, T] M^-1 D
  Mat P;        // [T, T] G o lower(Q K^^T)
  Mat L;        // [T, T] G o strict_lower(K^ K^^T)
};

// The forward of one head. gate: the key gate [T] or null; alphaGate null for plain DeltaNet.
inline void headForward(const ConstHeadMat& Q, const ConstHeadMat& K, const float* keyGate, const Gate& betaGate,
                        const Gate* alphaGate, HeadPass& p) {
  const int T = static_cast<int>(Q.rows()), d = static_cast<int>(Q.cols());
  p.Kn.resize(T, d);
  p.invNorm.resize(T);
  p.sigBeta.resize(T);
  p.beta.resize(T);
  Vec logAlphaSum = Vec::Zero(T);  // c_t = sum_{m<=t} log alpha_m
  if (alphaGate) p.sigAlpha.resize(T);
  for (int t = 0; t < T; ++t) {
    p.invNorm[t] = 1.0f / std::sqrt(K.row(t).squaredNorm() + kNormEps);
    p.Kn.row(t) = K.row(t) * p.invNorm[t];  // k^ = k / |k|
    p.sigBeta[t] = sigmoid(betaGate.logit(K.row(t).data(), d));
    p.beta[t] = p.sigBeta[t] * (keyGate ? keyGate[t] : 1.0f);  // beta = sigmoid(w.k + c) g
    if (alphaGate) {
      const float z = alphaGate->logit(K.row(t).data(), d);
      p.sigAlpha[t] = sigmoid(z);
      logAlphaSum[t] = (t ? logAlphaSum[t - 1] : 0.0f) + logSigmoid(z);
    }
  }
  p.decay = Mat::Zero(T, T);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) p.decay(i, j) = alphaGate ? std::exp(logAlphaSum[i] - logAlphaSum[j]) : 1.0f;  // G_ij
  p.keyDots.noalias() = p.Kn * p.Kn.transpose();
  p.qkDots.noalias() = Q * p.Kn.transpose();
  p.L = p.decay.cwiseProduct(p.keyDots).triangularView<Eigen::StrictlyLower>();  // G o strict_lower(K^ K^^T)
  p.P = p.decay.cwiseProduct(p.qkDots);                                           // G o lower(Q K^^T) (G is 0 above)
  Mat M = p.beta.asDiagonal() * p.L;
  M.diagonal().setOnes();  // M = I + D L
  p.X = M.triangularView<Eigen::UnitLower>().solve(Mat(p.beta.asDiagonal()));  // X = M^-1 D
}

// The recurrent form of one query head: S (d x d), o_t = S_t q_t after adding token t.
class DeltaState : public RecurrentState {
 public:
  DeltaState(int dHead, Gate beta, std::unique_ptr<Gate> alpha)
      : S_(Mat::Zero(dHead, dHead)), beta_(beta), alpha_(std::move(alpha)) {}
  void reset() override { S_.setZero(); }
  void step(const float* q, const float* k, const float* v, float* o, float gate) override {
    const int d = static_cast<int>(S_.rows());
    const Eigen::Map<const Vec> key(k, d), value(v, d), query(q, d);
    const Vec kn = key / std::sqrt(key.squaredNorm() + kNormEps);
    const float beta = sigmoid(beta_.logit(k, d)) * gate;
    const float alpha = alpha_ ? sigmoid(alpha_->logit(k, d)) : 1.0f;
    S_ *= alpha;                                      // alpha S_{t-1}
    const Vec u = beta * (value - S_ * kn);           // u = beta (v - alpha S_{t-1} k^)
    S_.noalias() += u * kn.transpose();               // S_t = alpha S_{t-1} + u k^^T
    Eigen::Map<Vec>(o, d).noalias() = S_ * query;     // o = S_t q
  }
  size_t bytes() const override { return sizeof(float) * static_cast<size_t>(S_.size()); }

 private:
  Mat S_;
  Gate beta_;
  std::unique_ptr<Gate> alpha_;
};

}  // namespace delta

class DeltaNetAttention : public AttentionVariant {
 public:
  explicit DeltaNetAttention(bool gated) : gated_(gated) {}

  std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) override {
    const int H = config.n_heads, d = config.headDim();
    betaW_ = &params.add(prefix + "delta_beta_w", {H, d});
    betaB_ = &params.add(prefix + "delta_beta_b", {H}, false);
    if (gated_) {
      alphaW_ = &params.add(prefix + "delta_alpha_w", {H, d});
      alphaB_ = &params.add(prefix + "delta_alpha_b", {H}, false);
    }
    return {};
  }
  void initialise(Rng&) override {
    betaW_->value.setZero();
    betaB_->value.setZero();
    if (gated_) {
      alphaW_->value.setZero();
      alphaB_->value.setConstant(3.0f);
    }
  }
  bool usesDotScores() const override { return false; }
  bool cachesKeysAndValues() const override { return false; }
  std::unique_ptr<RecurrentState> recurrentState(int head, int dHead) const override {
    return std::make_unique<delta::DeltaState>(dHead, betaGate(head),
                                               gated_ ? std::make_unique<delta::Gate>(alphaGate(head)) : nullptr);
  }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    forEachHead(in.shape, [&](const HeadSlices& h) {
      delta::HeadPass p;
      const delta::Gate alpha = gated_ ? alphaGate(h.h) : delta::Gate{};
      delta::headForward(h.q(in.q), h.k(in.k), h.keyGate(in.key_gate), betaGate(h.h), gated_ ? &alpha : nullptr, p);
      auto A = h.map(out.weights);
      A.noalias() = p.P * p.X;  // A = P M^-1 D (lower triangular)
      h.out(out.o).noalias() = A * h.v(in.v);  // O = A V
      auto S = h.map(out.scores);
      S = p.P;
      for (int i = 0; i < in.shape.T; ++i) S.row(i).tail(in.shape.T - 1 - i).setConstant(-std::numeric_limits<float>::infinity());
    });
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const AttentionShape& s = in.shape;
    const int T = s.T, d = s.dHead;
    // per (batch, query head) parameter gradients, summed in a fixed order after the parallel loop
    std::vector<Mat> dBetaW(static_cast<size_t>(s.B) * s.H), dAlphaW(dBetaW.size());
    std::vector<float> dBetaB(dBetaW.size()), dAlphaB(dBetaW.size());
    forEachKvGroup(s, [&](const HeadSlices& h, bool firstInGroup) {
      auto dK = h.kvOut(g.d_k);
      auto dV = h.kvOut(g.d_v);
      if (firstInGroup) {
        dK.setZero();
        dV.setZero();
      }
      const ConstHeadMat Q = h.q(in.q), K = h.k(in.k), V = h.v(in.v);
      const ConstHeadMat A = h.map(static_cast<const float*>(saved.weights));
      const ConstHeadMat dO(g.d_o + h.qOffset(), T, d);
      const float* keyGate = h.keyGate(in.key_gate);
      delta::HeadPass p;
      const delta::Gate betaG = betaGate(h.h), alphaG = gated_ ? alphaGate(h.h) : delta::Gate{};
      delta::headForward(Q, K, keyGate, betaG, gated_ ? &alphaG : nullptr, p);

      const Mat dA = dO * V.transpose();  // from O = A V
      dV.noalias() += A.transpose() * dO;  // from O = A V
      Mat dP = dA * p.X.transpose();       // from A = P X
      dP = dP.triangularView<Eigen::Lower>();
      const Mat dX = p.P.transpose() * dA;  // from A = P X
      // from X = M^-1 D: with Y = M^-T dX, dD = diag(Y) and dM = -Y X^T
      Mat M = p.beta.asDiagonal() * p.L;
      M.diagonal().setOnes();
      const Mat Y = M.transpose().triangularView<Eigen::UnitUpper>().solve(dX);
      const Mat dM = -(Y * p.X.transpose());
      Vec dBeta = Y.diagonal();
      dBeta += dM.cwiseProduct(p.L).rowwise().sum();  // from M = I + D L
      Mat dL = p.beta.asDiagonal() * dM;               // from M = I + D L
      dL = dL.triangularView<Eigen::StrictlyLower>();
      // from L = G o strict_lower(K^ K^^T) and P = G o lower(Q K^^T)
      const Mat dKeyDots = dL.cwiseProduct(p.decay), dQkDots = dP.cwiseProduct(p.decay);
      h.out(g.d_q).noalias() = dQkDots * p.Kn;  // from Q K^^T
      Mat dKn = dQkDots.transpose() * Q;        // from Q K^^T
      dKn.noalias() += (dKeyDots + dKeyDots.transpose()) * p.Kn;  // from K^ K^^T
      Mat dKraw(T, d);
      for (int t = 0; t < T; ++t)  // from k^ = k / |k|
        dKraw.row(t) = (dKn.row(t) - p.Kn.row(t) * p.Kn.row(t).dot(dKn.row(t))) * p.invNorm[t];
      const size_t slot = static_cast<size_t>(h.b) * s.H + h.h;
      const Eigen::Map<const RowVec> wBeta(betaG.w, d);
      float* dGate = h.keyGate(g.d_key_gate);
      Vec dzBeta(T);
      for (int t = 0; t < T; ++t) {  // from beta = sigmoid(z_b) g, z_b = w_b . k + c_b
        const float gt = keyGate ? keyGate[t] : 1.0f;
        if (dGate) dGate[t] = dBeta[t] * p.sigBeta[t];
        dzBeta[t] = dBeta[t] * gt * p.sigBeta[t] * (1.0f - p.sigBeta[t]);
        dKraw.row(t) += dzBeta[t] * wBeta;
      }
      dBetaW[slot] = dzBeta.transpose() * K;
      dBetaB[slot] = dzBeta.sum();
      if (gated_) {
        // from G_ij = exp(c_i - c_j), c_t = sum_{m<=t} log alpha_m: e_ij = dG_ij G_ij
        const Mat e = (dL.cwiseProduct(p.keyDots) + dP.cwiseProduct(p.qkDots)).cwiseProduct(p.decay);
        const Vec dc = e.rowwise().sum() - e.colwise().sum().transpose();
        Vec dzAlpha(T);
        float suffix = 0;
        for (int t = T - 1; t >= 0; --t) {
          suffix += dc[t];                                  // d(log alpha_t) = sum_{i>=t} dc_i
          dzAlpha[t] = suffix * (1.0f - p.sigAlpha[t]);     // from log alpha = log sigmoid(z_a)
        }
        const Eigen::Map<const RowVec> wAlpha(alphaG.w, d);
        dKraw.noalias() += dzAlpha * wAlpha;  // from z_a = w_a . k + c_a
        dAlphaW[slot] = dzAlpha.transpose() * K;
        dAlphaB[slot] = dzAlpha.sum();
      }
      dK += dKraw;
    });
    for (size_t slot = 0; slot < dBetaW.size(); ++slot) {
      const int hd = static_cast<int>(slot % s.H);
      betaW_->grad.row(hd) += dBetaW[slot];
      betaB_->grad(0, hd) += dBetaB[slot];
      if (gated_) {
        alphaW_->grad.row(hd) += dAlphaW[slot];
        alphaB_->grad(0, hd) += dAlphaB[slot];
      }
    }
  }

 private:
  delta::Gate betaGate(int head) const { return {betaW_->value.row(head).data(), betaB_->value.data() + head}; }
  delta::Gate alphaGate(int head) const { return {alphaW_->value.row(head).data(), alphaB_->value.data() + head}; }

  bool gated_;
  Param *betaW_ = nullptr, *betaB_ = nullptr, *alphaW_ = nullptr, *alphaB_ = nullptr;
};

}  // namespace attnlab
