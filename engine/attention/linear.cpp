#include <limits>

#include "attention/attention.h"
#include "attention/head_loops.h"
#include "attention/linear_state.h"

namespace attnlab {
namespace {

Mat phiOf(const ConstHeadMat& x) { return x.unaryExpr([](float v) { return eluPlusOne(v); }); }
// phi'(x) from x and phi(x): 1 for x > 0, else exp(x) = phi(x).
Mat phiGradOf(const ConstHeadMat& x, const Mat& phi) { return (x.array() > 0).select(1.0f, phi.array()); }

// Sets every entry above the diagonal (row by row: the maps are row-major) to `value`.
template <class Matrix>
void fillAboveDiagonal(Matrix&& m, float value) {
  const Eigen::Index T = m.rows();
  for (Eigen::Index i = 0; i + 1 < T; ++i) m.row(i).tail(T - 1 - i).setConstant(value);
}

// Key gates as a row [1, T] (ones without a gate), to scale the columns of a [T, T] map.
RowVec gateRow(const float* gate, int T) { return gate ? RowVec(ConstMatMap(gate, 1, T)) : RowVec::Ones(T); }

// Linear (kernel) attention with phi(x) = elu(x) + 1, in its parallel causal form
//   m_ij = phi(q_i).phi(k_j) (j <= i),  a_ij = g_j m_ij / sum_{j' <= i} g_j' m_ij',  o_i = sum_j a_ij v_j,
// which equals phi(q_i)^T S_i / phi(q_i)^T z_i of the recurrent form (linear_state.h, used for decoding).
// The map the views draw is A; the scores are m_ij. Not a function of q.k, so rotary encodings do not
// apply (the layer skips the rotation), and neither does a score bias (ALiBi): linear attention has no
// place to add it, so a bias-based encoding leaves these layers position-blind. No 1/sqrt(d) scale:
// the row normalisation cancels any constant factor. Under an emulated precision the m_ij are rounded.
class LinearAttention : public AttentionVariant {
 public:
  std::string configure(const ModelConfig&, const std::string&, ParamStore&) override { return {}; }
  bool usesDotScores() const override { return false; }
  bool cachesKeysAndValues() const override { return false; }
  std::unique_ptr<RecurrentState> recurrentState(int, int dHead) const override { return std::make_unique<LinearAttentionState>(dHead); }

  void forward(const AttentionInputs& in, AttentionOutputs& out) const override {
    const int T = in.shape.T;
    forEachHead(in.shape, [&](const HeadSlices& h) {
      auto M = h.map(out.scores);
      auto A = h.map(out.weights);
      M.noalias() = phiOf(h.q(in.q)) * phiOf(h.k(in.k)).transpose();  // m = phi(q) . phi(k)
      if (in.precision != ScorePrecision::fp32) M = M.unaryExpr([&](float m) { return roundTo(in.precision, m); });
      A = M;
      fillAboveDiagonal(A, 0.0f);  // causal
      if (const float* gate = h.keyGate(in.key_gate)) A.array().rowwise() *= gateRow(gate, T).array();  // n = g m
      const Vec rowSum = A.rowwise().sum();
      A.array().colwise() *= (rowSum.array() > 0).select(rowSum.array().inverse(), 0.0f);  // a = n / sum(n)
      fillAboveDiagonal(M, -std::numeric_limits<float>::infinity());
      h.out(out.o).noalias() = A * h.v(in.v);  // O = A V
    });
  }

  void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g) override {
    const int T = in.shape.T;
    forEachKvGroup(in.shape, [&](const HeadSlices& h, bool firstInGroup) {
      auto dK = h.kvOut(g.d_k);
      auto dV = h.kvOut(g.d_v);
      if (firstInGroup) {
        dK.setZero();
        dV.setZero();
      }
      Mat M = h.map(static_cast<const float*>(saved.scores));
      fillAboveDiagonal(M, 0.0f);  // masked scores (-inf) count as m = 0
      const ConstHeadMat A = h.map(static_cast<const float*>(saved.weights));
      const ConstHeadMat dO(g.d_o + h.qOffset(), T, in.shape.dHead);
      const RowVec gate = gateRow(h.keyGate(in.key_gate), T);
      const Mat dA = dO * h.v(in.v).transpose();  // from O = A V
      dV.noalias() += A.transpose() * dO;         // from O = A V
      // from a = n / sum(n), n = g m: dn_ij = (da_ij - sum_j' a_ij' da_ij') / sum(n)_i for j <= i
      const Vec rowSum = M * gate.transpose();
      const Vec rowDot = A.cwiseProduct(dA).rowwise().sum();
      Mat dN = dA.colwise() - rowDot;
      fillAboveDiagonal(dN, 0.0f);
      dN.array().colwise() *= (rowSum.array() > 0).select(rowSum.array().inverse(), 0.0f);
      if (float* dGate = h.keyGate(g.d_key_gate)) MatMap(dGate, 1, T) = dN.cwiseProduct(M).colwise().sum();  // from n = g m
      if (in.key_gate) dN.array().rowwise() *= gate.array();  // now dm
      // from m = phi(q) phi(k)^T and phi's derivative
      const Mat phiQ = phiOf(h.q(in.q)), phiK = phiOf(h.k(in.k));
      h.out(g.d_q) = (dN * phiK).cwiseProduct(phiGradOf(h.q(in.q), phiQ));
      dK += (dN.transpose() * phiQ).cwiseProduct(phiGradOf(h.k(in.k), phiK));
    });
  }
};

ATTNLAB_REGISTER(AttentionRegistry, "linear",
                 "a_ij = phi(q_i).phi(k_j) / sum_j' phi(q_i).phi(k_j'), phi = elu + 1 (no rotary, no score bias)",
                 [] { return std::make_unique<LinearAttention>(); });

}  // namespace
}  // namespace attnlab
