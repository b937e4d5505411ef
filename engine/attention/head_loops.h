#pragma once
// Loops over the heads of one layer, shared by the attention variants: slicing the head-major
// buffers, the scaled causal score matrix, and the backward of every variant whose output is
// O = A V with A a function of S = scale * Q K^T + bias (the variant supplies dS from dA).
#include <algorithm>
#include <limits>

#include "attention/attention.h"
#include "core/tensor.h"
#include "core/threads.h"

namespace attnlab {

using HeadMat = Eigen::Map<Mat>;
using ConstHeadMat = Eigen::Map<const Mat>;

struct HeadSlices {
  const AttentionShape& s;
  int b, h, kvh;

  size_t qOffset() const { return static_cast<size_t>(b * s.H + h) * s.T * s.dHead; }
  size_t kvOffset() const { return static_cast<size_t>(b * s.Hkv + kvh) * s.T * s.dHead; }
  size_t mapOffset() const { return static_cast<size_t>(b * s.H + h) * s.T * s.T; }
  size_t tokenOffset() const { return static_cast<size_t>(b * s.H + h) * s.T; }

  ConstHeadMat q(const float* base) const { return {base + qOffset(), s.T, s.dHead}; }
  ConstHeadMat k(const float* base) const { return {base + kvOffset(), s.T, s.dHead}; }
  ConstHeadMat v(const float* base) const { return {base + kvOffset(), s.T, s.dHead}; }
  HeadMat out(float* base) const { return {base + qOffset(), s.T, s.dHead}; }
  HeadMat kvOut(float* base) const { return {base + kvOffset(), s.T, s.dHead}; }
  HeadMat map(float* base) const { return {base + mapOffset(), s.T, s.T}; }
  ConstHeadMat map(const float* base) const { return {base + mapOffset(), s.T, s.T}; }
  const float* bias(const float* base) const { return base ? base + static_cast<size_t>(h) * s.T * s.T : nullptr; }
  const float* keyGate(const float* base) const { return base ? base + tokenOffset() : nullptr; }
  float* keyGate(float* base) const { return base ? base + tokenOffset() : nullptr; }
};

// Multiply-adds of one layer's score and output products, to tell whether threads are worth waking.
inline double attentionMultiplyAdds(const AttentionShape& s) { return 2.0 * s.B * s.H * s.T * s.T * s.dHead; }

// Runs f(HeadSlices) for every (batch, head), in parallel over threads.
template <class F>
void forEachHead(const AttentionShape& s, F&& f) {
  forEachIndex(s.B * s.H, attentionMultiplyAdds(s) >= kMinParallelMultiplyAdds, [&](int bh) {
    const int h = bh % s.H;
    f(HeadSlices{s, bh / s.H, h, h / s.group()});
  });
}

// Runs f for every (batch, KV head), parallel across them and sequential over the query heads
// of a group, so that gradients into a shared K/V head accumulate without races and in a fixed order.
template <class F>
void forEachKvGroup(const AttentionShape& s, F&& f) {
  forEachIndex(s.B * s.Hkv, attentionMultiplyAdds(s) >= kMinParallelMultiplyAdds, [&](int bk) {
    const int b = bk / s.Hkv, kvh = bk % s.Hkv;
    for (int h = kvh * s.group(); h < (kvh + 1) * s.group(); ++h) f(HeadSlices{s, b, h, kvh}, h == kvh * s.group());
  });
}

// Causal products skip the blocks above the diagonal: query rows [r0, r0 + rows) see keys
// [0, r0 + rows) only. With blocks of kCausalRows rows a T x T product costs (1 + 1/n) / 2 of the
// full one (n = T / kCausalRows: 62.5% at T = 128). Every skipped entry is one the full product
// would have computed and then masked: -inf in S, exactly 0 in A, dA's use and dS, so the results
// equal the full products' up to float rounding (test_attention_fast_paths checks).
constexpr int kCausalRows = 32;

template <class F>
void forEachCausalBlock(int T, F&& f) {
  for (int r0 = 0; r0 < T; r0 += kCausalRows) f(r0, std::min(kCausalRows, T - r0));
}

// O = A V for a causal A (exactly 0 above the diagonal), block by block as above.
inline void causalWeightedValues(const ConstHeadMat& A, const ConstHeadMat& V, HeadMat O) {
  forEachCausalBlock(static_cast<int>(A.rows()), [&](int r0, int rows) {
    O.middleRows(r0, rows).noalias() = A.block(r0, 0, rows, r0 + rows) * V.topRows(r0 + rows);
  });
}

// S = scale * Q K^T + bias for j <= i, -inf for j > i (the causal mask). Under an emulated
// precision the product, the bias and their sum are each rounded to the format (precision.h).
inline void causalScores(const AttentionInputs& in, const HeadSlices& h, float* scores) {
  auto S = h.map(scores);
  const float* bias = h.bias(in.bias);
  const int T = in.shape.T;
  forEachCausalBlock(T, [&](int r0, int rows) {
    auto block = S.block(r0, 0, rows, r0 + rows);
    block.noalias() = in.scale * h.q(in.q).middleRows(r0, rows) * h.k(in.k).topRows(r0 + rows).transpose();
    if (bias && in.precision == ScorePrecision::fp32) block += ConstHeadMat(bias, T, T).block(r0, 0, rows, r0 + rows);
  });
  if (in.precision != ScorePrecision::fp32) {
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) {
        const float product = roundTo(in.precision, S(i, j));
        S(i, j) = bias ? roundTo(in.precision, product + roundTo(in.precision, bias[i * T + j])) : product;
      }
  }
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) S(i, j) = -std::numeric_limits<float>::infinity();
}

// Backward of O = A V, A = f(S), S = scale Q K^T + bias. `dScores(h, A, dA, dS)` writes dS from dA
// (and may accumulate gate or parameter gradients). Writes d_q, d_k, d_v.
template <class F>
void backwardFromWeights(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g, F&& dScores) {
  const int T = in.shape.T;
  forEachKvGroup(in.shape, [&](const HeadSlices& h, bool firstInGroup) {
    auto dK = h.kvOut(g.d_k);
    auto dV = h.kvOut(g.d_v);
    if (firstInGroup) {
      dK.setZero();
      dV.setZero();
    }
    const ConstHeadMat A = h.map(static_cast<const float*>(saved.weights));
    const ConstHeadMat dO(g.d_o + h.qOffset(), T, in.shape.dHead);
    const ConstHeadMat Q = h.q(in.q), K = h.k(in.k), V = h.v(in.v);
    thread_local Mat dAStore, dSStore;  // per worker thread, reused across heads and steps
    dAStore.resize(T, T);
    dSStore.resize(T, T);
    HeadMat dA(dAStore.data(), T, T), dS(dSStore.data(), T, T);
    forEachCausalBlock(T, [&](int r0, int rows) {  // causal blocks: a_ij = 0 for j > i
      dA.block(r0, 0, rows, r0 + rows).noalias() = dO.middleRows(r0, rows) * V.topRows(r0 + rows).transpose();  // from O = A V
      dA.block(r0, r0 + rows, rows, T - r0 - rows).setZero();  // unused (a = 0 there) but read by whole-matrix code
      dV.topRows(r0 + rows).noalias() += A.block(r0, 0, rows, r0 + rows).transpose() * dO.middleRows(r0, rows);  // from O = A V
    });
    dScores(h, A, dA, dS);  // dS is 0 above the diagonal (a = 0 there, or the variant writes 0)
    forEachCausalBlock(T, [&](int r0, int rows) {
      const auto dSBlock = dS.block(r0, 0, rows, r0 + rows);
      h.out(g.d_q).middleRows(r0, rows).noalias() = in.scale * dSBlock * K.topRows(r0 + rows);  // from S = scale Q K^T
      dK.topRows(r0 + rows).noalias() += in.scale * dSBlock.transpose() * Q.middleRows(r0, rows);  // from S = scale Q K^T
    });
  });
}

}  // namespace attnlab
