#pragma once
// The masked softmax shared by the softmax-like variants (softmax, sliding window, momentum):
//   a_ij = softmax_j(beta s_ij + log g_j) over the visible keys j in [first(i), i], exactly 0 elsewhere,
// with o = A V. Forward beside backward; each backward line names the forward line it undoes.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/head_loops.h"

namespace attnlab {

// The temperature every softmax-like variant (and sigmoid, on its scores) honours.
inline SettingSpec temperatureSetting() {
  return {"temperature", 1.0, 1e-3, 1e3, false, "beta: logits are beta * s (larger is sharper)"};
}

// Keys visible to query i are j in [firstVisibleKey(i, window), i]; window 0 means every earlier key.
inline int firstVisibleKey(int i, int window) { return window > 0 ? std::max(0, i - window + 1) : 0; }

// One head, the plain reference. S holds the causal scores; keys before the window are set to -inf there too, so the
// trace tells them from weights that are merely small. Logits and exponentials are rounded to
// `precision` (an exponential below the format's range becomes exactly 0); sums stay float32.
inline void maskedSoftmaxHeadPlain(HeadMat S, HeadMat A, float beta, const float* gate, int window, ScorePrecision precision) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const int T = static_cast<int>(S.rows());
  A.setZero();
  for (int i = 0; i < T; ++i) {
    const int first = firstVisibleKey(i, window);
    for (int j = 0; j < first; ++j) S(i, j) = kMinusInf;
    float maxLogit = kMinusInf;
    for (int j = first; j <= i; ++j) {
      const float z = roundTo(precision, beta * S(i, j) + (gate ? std::log(gate[j]) : 0.0f));  // z = beta s + log g
      A(i, j) = z;
      maxLogit = std::isnan(z) ? z : std::max(maxLogit, z);  // a NaN must reach the loss (divergence check)
    }
    if (maxLogit == kMinusInf) {  // every visible key gated to zero: an all-zero row, not NaN
      for (int j = first; j <= i; ++j) A(i, j) = 0.0f;
      continue;
    }
    float sum = 0;
    for (int j = first; j <= i; ++j) sum += (A(i, j) = roundTo(precision, std::exp(A(i, j) - maxLogit)));
    const float inv = 1.0f / sum;  // sum >= 1: the largest logit contributes exp(0)
    for (int j = first; j <= i; ++j) A(i, j) *= inv;  // a = e / sum
  }
}

// Decoding row (attention.h: DecodeRowInputs) for the softmax-like variants: s_j = scale q.k_j + b_j
// rounded as causalScores rounds it, a_j = softmax_j(beta s_j + log g_j) over the live keys whose
// position lies in the window [query - w + 1, query] (w = 0: all), o = sum_j a_j v_j. The plain
// reference; softmaxDecodeRow below dispatches to the fast path where it applies.
inline void softmaxDecodeRowPlain(const DecodeRowInputs& in, float beta, int window, float* o, float* weights) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const int first = firstVisibleKey(in.query_position, window);
  float maxLogit = kMinusInf;
  for (int j = 0; j < in.n; ++j) {
    if (in.key_positions[j] < first) {
      weights[j] = kMinusInf;
      continue;
    }
    float dot = 0;
    for (int d = 0; d < in.dHead; ++d) dot += in.q[d] * in.k[static_cast<size_t>(j) * in.dHead + d];
    float s = roundTo(in.precision, in.scale * dot);
    if (in.bias) s = in.precision == ScorePrecision::fp32 ? s + in.bias[j] : roundTo(in.precision, s + roundTo(in.precision, in.bias[j]));
    const float z = roundTo(in.precision, beta * s + (in.key_gate ? std::log(in.key_gate[j]) : 0.0f));
    weights[j] = z;
    maxLogit = std::isnan(z) ? z : std::max(maxLogit, z);
  }
  std::fill(o, o + in.dHead, 0.0f);
  if (maxLogit == kMinusInf) {  // nothing visible or every key gated to zero: an all-zero row
    std::fill(weights, weights + in.n, 0.0f);
    return;
  }
  float sum = 0;
  for (int j = 0; j < in.n; ++j) sum += (weights[j] = roundTo(in.precision, std::exp(weights[j] - maxLogit)));
  const float inv = 1.0f / sum;
  for (int j = 0; j < in.n; ++j) {
    weights[j] *= inv;
    for (int d = 0; d < in.dHead; ++d) o[d] += weights[j] * in.v[static_cast<size_t>(j) * in.dHead + d];
  }
}

// Fast path of softmaxDecodeRowPlain for float32 scores without a key gate (decoding's common
// case): the scores of all live keys as one matrix-vector product, a vectorised exp in aligned
// scratch (as maskedSoftmaxHeadFp32, below), and the output as a second product. The masking,
// NaN and empty-row rules are the plain path's; values agree to float rounding (the dot
// products' summation order differs). test_attention_fast_paths checks it.
inline void softmaxDecodeRowFp32(const DecodeRowInputs& in, float beta, int window, float* o, float* weights) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  using RowMajorMap = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  const int n = in.n, first = firstVisibleKey(in.query_position, window);
  const RowMajorMap K(in.k, n, in.dHead), V(in.v, n, in.dHead);
  Eigen::Map<Eigen::VectorXf> out(o, in.dHead);
  Eigen::Map<Eigen::ArrayXf> w(weights, n);
  thread_local Eigen::ArrayXf scratch;
  if (scratch.size() < n) scratch.resize(n);
  auto z = scratch.head(n);
  z.matrix().noalias() = K * Eigen::Map<const Eigen::VectorXf>(in.q, in.dHead);
  z *= in.scale;                                                    // s = scale q.k
  if (in.bias) z += Eigen::Map<const Eigen::ArrayXf>(in.bias, n);  // s + b
  z *= beta;                                                        // z = beta s
  float maxLogit = kMinusInf;
  for (int j = 0; j < n; ++j) {
    if (in.key_positions[j] < first) z[j] = kMinusInf;
    else maxLogit = std::isnan(z[j]) ? z[j] : std::max(maxLogit, z[j]);
  }
  if (maxLogit == kMinusInf) {  // nothing visible: an all-zero row
    out.setZero();
    w.setZero();
    return;
  }
  w = z;  // the logits, for the subnormal fallback below
  z = (z - maxLogit).exp();
  float sum = 0;
  for (int j = 0; j < n; ++j) {
    const float e = z[j] != 0.0f ? z[j] : std::exp(w[j] - maxLogit);  // Eigen's exp flushes subnormals to 0
    w[j] = e;
    sum += e;  // in index order, as the plain path sums
  }
  w *= 1.0f / sum;
  out.noalias() = V.transpose() * w.matrix();  // o = sum_j a_j v_j
}

// Dispatches to the fast path where it applies.
inline void softmaxDecodeRow(const DecodeRowInputs& in, float beta, int window, float* o, float* weights) {
  if (in.precision == ScorePrecision::fp32 && !in.key_gate) softmaxDecodeRowFp32(in, beta, window, o, weights);
  else softmaxDecodeRowPlain(in, beta, window, o, weights);
}

// Fast path of maskedSoftmaxHeadPlain for float32 scores without a key gate (training's common
// case): the same masking and the same values, each row computed with Eigen's vectorised exp and
// max over the visible span only, and only the masked cells zeroed. Results agree with
// the plain path to float rounding (exp and summation order differ); test_attention_fast_paths
// checks it. A NaN logit still makes its whole row NaN (z - max and the sum carry it).
inline void maskedSoftmaxHeadFp32(HeadMat S, HeadMat A, float beta, int window) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const int T = static_cast<int>(S.rows());
  // Eigen-aligned scratch: exp splits a row into packets and a scalar tail by the address, so
  // working here (not in A, wherever it sits) keeps a seed's training bitwise repeatable.
  thread_local Eigen::ArrayXf scratch;
  if (scratch.size() < T) scratch.resize(T);
  for (int i = 0; i < T; ++i) {
    const int first = firstVisibleKey(i, window), n = i - first + 1;
    auto s = S.row(i).array();
    auto a = A.row(i).array();
    s.head(first).setConstant(kMinusInf);
    a.head(first).setZero();
    a.tail(T - 1 - i).setZero();
    auto z = scratch.head(n);
    z = beta * s.segment(first, n);  // z = beta s
    const float maxLogit = z.maxCoeff<Eigen::PropagateNaN>();
    if (maxLogit == kMinusInf) {  // every visible score -inf: an all-zero row, not NaN
      a.segment(first, n).setZero();
      continue;
    }
    z = (z - maxLogit).exp();
    float sum = 0;
    for (int k = 0; k < n; ++k) {
      // Eigen's exp flushes results below float32's normal range to 0; std::exp keeps the
      // subnormals (gaps of 87 to 103), as the plain path does.
      const float e = z[k] != 0.0f ? z[k] : std::exp(beta * S(i, first + k) - maxLogit);
      A(i, first + k) = e;
      sum += e;  // in index order, as the plain path sums
    }
    a.segment(first, n) *= 1.0f / sum;  // a = e / sum, sum >= 1
  }
}

// Dispatches to the fast path where it applies.
inline void maskedSoftmaxHead(HeadMat S, HeadMat A, float beta, const float* gate, int window, ScorePrecision precision) {
  if (precision == ScorePrecision::fp32 && !gate) maskedSoftmaxHeadFp32(S, A, beta, window);
  else maskedSoftmaxHeadPlain(S, A, beta, gate, window, precision);
}

// Forward of the whole layer: S = scale Q K^T + bias, masked softmax, O = A V.
inline void softmaxAttentionForward(const AttentionInputs& in, AttentionOutputs& out, float beta, int window) {
  forEachHead(in.shape, [&](const HeadSlices& h) {
    causalScores(in, h, out.scores);
    maskedSoftmaxHead(h.map(out.scores), h.map(out.weights), beta, h.keyGate(in.key_gate), window, in.precision);
    causalWeightedValues(h.map(static_cast<const float*>(out.weights)), h.v(in.v), h.out(out.o));
  });
}

// Backward of softmaxAttentionForward (straight-through for the rounding). Writes d_q, d_k, d_v
// and d_key_gate when the gate is set.
inline void softmaxAttentionBackward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g, float beta) {
  backwardFromWeights(in, saved, g, [&](const HeadSlices& h, const ConstHeadMat& A, const HeadMat& dA, HeadMat& dS) {
    // from a = e / sum(e), e = exp(z - max): dz = a (dA - rowsum(a dA)); zero wherever a is (masked keys)
    const auto rowDot = (A.array() * dA.array()).rowwise().sum().eval();
    dS = (A.array() * (dA.array().colwise() - rowDot)).matrix();
    if (g.d_key_gate) {  // from z = ... + log g_j: dg_j = sum_i dz_ij / g_j
      const float* gate = h.keyGate(in.key_gate);
      float* dGate = h.keyGate(g.d_key_gate);
      const auto colSum = dS.colwise().sum().eval();
      for (int j = 0; j < in.shape.T; ++j) dGate[j] = colSum[j] / gate[j];
    }
    dS *= beta;  // from z = beta s
  });
}

}  // namespace attnlab
