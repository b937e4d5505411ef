#pragma once
// Softmax attention without T x T maps, for training: the forward walks each query block's keys a
// block at a time with a running maximum and sum (the online softmax), and keeps per row only
//   L_i = log sum_j exp(z_ij)   (z = beta s, s = scale q.k + bias over the visible keys),
// the row's entropy and its largest |s_ij|; the backward recomputes each block's weights as
// a_ij = exp(z_ij - L_i) from q, k and L. Memory per head is O(T) beside one block of scratch,
// where softmax_core.h holds scores, weights and their gradients as T x T maps. Same masking
// (causal, optional window) and the same values up to float rounding (test_tiled_attention);
// float32 scores and no key gate (the layer uses the plain path otherwise).
#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/head_loops.h"
#include "attention/softmax_core.h"
#include "core/gemm.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attnlab {

constexpr int kTileRows = 64, kTileKeys = 64;

// Whether a softmax-like variant can attend with these inputs without maps.
inline bool tiledSoftmaxApplies(const AttentionInputs& in) { return in.precision == ScorePrecision::fp32 && !in.key_gate; }

namespace tiled {

// C = alpha op(A) op(B) + beta C for blocks of row-major matrices, on the engine's packed kernels
// (core/gemm.h): on the 64 x 64 tiles of a 32-wide head they ran at 82-88 GFLOP/s against Eigen's
// 61-64 (attnlab-bench --gemm, the "tiled" rows).
template <class C, class A, class B>
void product(C&& c, const A& a, bool ta, const B& b, bool tb, float alpha = 1.0f, float beta = 0.0f) {
  const gemm::View va = gemm::view(a), vb = gemm::view(b);
  gemm::multiply(gemm::mutView(c), ta ? va.t() : va, tb ? vb.t() : vb, alpha, beta);
}

// Scores of query rows [r0, r0 + rows) against keys [c0, c0 + cols): S = scale Q K^T + bias.
inline void blockScores(const AttentionInputs& in, const HeadSlices& h, int r0, int rows, int c0, int cols, Mat& S) {
  S.resize(rows, cols);
  product(S, h.q(in.q).middleRows(r0, rows), false, h.k(in.k).middleRows(c0, cols), true, in.scale);
  if (const float* bias = h.bias(in.bias)) S += ConstHeadMat(bias, in.shape.T, in.shape.T).block(r0, c0, rows, cols);
}

// The visible keys of query i inside the block [c0, c0 + cols), as [lo, hi) relative to c0.
struct Span {
  int lo, hi;
};
inline Span visibleSpan(int i, int c0, int cols, int window) {
  return {std::max(firstVisibleKey(i, window), c0) - c0, std::min(i + 1, c0 + cols) - c0};
}

#if defined(__AVX512F__)
// The lanes of a 16-float vector whose offsets lie in [lo, hi) (either end may fall outside 0..16):
// the row's keys [j + lo, j + hi) of the chunk starting at key j.
inline __mmask16 lanesIn(int lo, int hi) {
  const auto below = [](int n) { return (1u << std::clamp(n, 0, 16)) - 1; };  // lanes [0, n)
  return static_cast<__mmask16>(below(hi) & ~below(lo));
}
#endif

// One row of a block in the forward, in two passes over the visible scores s = row[lo, hi).
// The first keeps big = max(big, max |s|) (unchanged when a score is NaN), writes z = beta s in
// place and returns max z (NaN when a z is NaN, so that it reaches the loss).
inline float scaleVisibleScores(float* row, Span span, float beta, float& big) {
#if defined(__AVX512F__)
  // Sixteen scores a time, the row's ends masked: Eigen's expressions on a span of 1 to 64 scores
  // ran their tails one score at a time (a sixth of the forward's time in a profile).
  __m512 largest = _mm512_setzero_ps(), zMax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __mmask16 nan = 0;
  for (int j = span.lo; j < span.hi; j += 16) {
    const __mmask16 lanes = lanesIn(0, span.hi - j);
    const __m512 sv = _mm512_maskz_loadu_ps(lanes, row + j), z = _mm512_mul_ps(sv, _mm512_set1_ps(beta));
    nan |= _mm512_mask_cmp_ps_mask(lanes, z, z, _CMP_UNORD_Q);  // a NaN score, or an infinite one times beta 0
    largest = _mm512_mask_max_ps(largest, lanes, _mm512_abs_ps(sv), largest);
    zMax = _mm512_mask_max_ps(zMax, lanes, z, zMax);
    _mm512_mask_storeu_ps(row + j, lanes, z);
  }
  if (nan) return std::numeric_limits<float>::quiet_NaN();
  big = std::max(big, _mm512_reduce_max_ps(largest));
  return _mm512_reduce_max_ps(zMax);
#else
  auto s = Eigen::Map<Eigen::ArrayXf>(row + span.lo, span.hi - span.lo);
  big = std::max(big, s.abs().maxCoeff<Eigen::PropagateNaN>());
  s *= beta;
  return s.maxCoeff<Eigen::PropagateNaN>();
#endif
}

// The second: row = e = exp(z - m) on the visible span and 0 elsewhere in [0, cols), l += sum e,
// u += sum e (z - m).
inline void exponentiateVisibleScores(float* row, int cols, Span span, float m, float& l, float& u) {
#if defined(__AVX512F__)
  __m512 sumE = _mm512_setzero_ps(), sumEz = _mm512_setzero_ps();
  const __m512 mv = _mm512_set1_ps(m);
  for (int j = 0; j < cols; j += 16) {
    const __mmask16 inRow = lanesIn(0, cols - j), visible = lanesIn(span.lo - j, span.hi - j);
    if (!visible) {  // masked keys weigh 0
      _mm512_mask_storeu_ps(row + j, inRow, _mm512_setzero_ps());
      continue;
    }
    const __m512 shifted = _mm512_sub_ps(_mm512_maskz_loadu_ps(visible, row + j), mv);  // z - m
    const __m512 e = _mm512_maskz_mov_ps(visible, Eigen::internal::pexp(shifted));     // e = exp(z - m)
    sumE = _mm512_add_ps(sumE, e);
    sumEz = _mm512_mask_add_ps(sumEz, visible, sumEz, _mm512_mul_ps(shifted, e));
    _mm512_mask_storeu_ps(row + j, inRow, e);
  }
  l += _mm512_reduce_add_ps(sumE);
  u += _mm512_reduce_add_ps(sumEz);
#else
  Eigen::Map<Eigen::ArrayXf> all(row, cols);
  auto e = all.segment(span.lo, span.hi - span.lo);
  const Eigen::ArrayXf shifted = e - m;  // z - m
  e = shifted.exp();
  u += (shifted * e).sum();
  l += e.sum();
  all.head(span.lo).setZero();
  all.tail(cols - span.hi).setZero();
#endif
}

// The backward's weights from its recomputed scores: row = exp(beta s - L) on the visible span and
// 0 elsewhere in [0, cols).
inline void weightsFromScores(float* row, int cols, Span span, float beta, float logSumExp) {
#if defined(__AVX512F__)
  const __m512 betaV = _mm512_set1_ps(beta), lseV = _mm512_set1_ps(logSumExp);
  for (int j = 0; j < cols; j += 16) {
    const __mmask16 inRow = lanesIn(0, cols - j), visible = lanesIn(span.lo - j, span.hi - j);
    const __m512 z = _mm512_fmsub_ps(betaV, _mm512_maskz_loadu_ps(visible, row + j), lseV);  // beta s - L
    _mm512_mask_storeu_ps(row + j, inRow, _mm512_maskz_mov_ps(visible, Eigen::internal::pexp(z)));
  }
#else
  Eigen::Map<Eigen::ArrayXf> all(row, cols);
  if (span.hi <= span.lo) {
    all.setZero();
    return;
  }
  auto a = all.segment(span.lo, span.hi - span.lo);
  a = (beta * a - logSumExp).exp();
  all.head(span.lo).setZero();
  all.tail(cols - span.hi).setZero();
#endif
}

}  // namespace tiled

// Forward of one head: writes o and, at the head's [T] rows of the three row outputs,
// L_i, the entropy -sum_j a_ij log a_ij and max_j |s_ij|.
inline void tiledSoftmaxHeadForward(const AttentionInputs& in, const HeadSlices& h, AttentionOutputs& out, float beta, int window) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const int T = in.shape.T;
  const ConstHeadMat V = h.v(in.v);
  HeadMat O = h.out(out.o);
  float* logSumExp = out.row_log_sum_exp + h.tokenOffset();
  float* entropy = out.row_entropy + h.tokenOffset();
  float* largest = out.row_max_abs_score + h.tokenOffset();
  thread_local Mat S, acc;
  // Per row of the block: running max m, sum l = sum exp(z - m), u = sum exp(z - m) (z - m), max |s|.
  thread_local Eigen::ArrayXf m, l, u, big;
  for (int r0 = 0; r0 < T; r0 += kTileRows) {
    const int rows = std::min(kTileRows, T - r0), end = r0 + rows;
    m.setConstant(rows, kMinusInf);
    l.setZero(rows);
    u.setZero(rows);
    big.setZero(rows);
    acc.setZero(rows, in.shape.dHead);
    for (int c0 = firstVisibleKey(r0, window); c0 < end; c0 += kTileKeys) {
      const int cols = std::min(kTileKeys, end - c0);
      tiled::blockScores(in, h, r0, rows, c0, cols, S);
      for (int r = 0; r < rows; ++r) {
        float* row = S.row(r).data();
        const tiled::Span span = tiled::visibleSpan(r0 + r, c0, cols, window);
        if (span.hi <= span.lo) {  // nothing visible in this block: it adds nothing
          std::fill_n(row, cols, 0.0f);
          continue;
        }
        const float blockMax = tiled::scaleVisibleScores(row, span, beta, big[r]);  // z = beta s
        const float next = std::isnan(blockMax) ? blockMax : std::max(m[r], blockMax);  // a NaN must reach the loss
        if (l[r] > 0) {  // rescale what earlier blocks added to the new maximum
          const float shrink = std::exp(m[r] - next);
          u[r] = shrink * (u[r] + (m[r] - next) * l[r]);  // sum e (z - next) = shrink (sum e' (z - m) + (m - next) sum e')
          l[r] *= shrink;
          acc.row(r) *= shrink;
        }
        m[r] = next;
        tiled::exponentiateVisibleScores(row, cols, span, next, l[r], u[r]);  // e = exp(z - m), 0 where masked
      }
      tiled::product(acc, S, false, V.middleRows(c0, cols), false, 1.0f, 1.0f);  // o = sum_j e_j v_j, divided by l below
    }
    for (int r = 0; r < rows; ++r) {
      O.row(r0 + r) = acc.row(r) / l[r];
      logSumExp[r0 + r] = m[r] + std::log(l[r]);    // L = m + log l
      entropy[r0 + r] = std::log(l[r]) - u[r] / l[r];  // -sum a log a with a = e / l, log a = (z - m) - log l
      largest[r0 + r] = big[r];
    }
  }
}

// Backward of tiledSoftmaxHeadForward for one KV group's query heads (forEachKvGroup): d_q of the
// head, d_k and d_v accumulated over the group. From o_i = sum_j a_ij v_j and
// a = softmax(z): dz_ij = a_ij (dO_i . v_j - D_i) with D_i = dO_i . o_i (= sum_j a_ij dA_ij).
inline void tiledSoftmaxHeadBackward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g, const HeadSlices& h,
                                     bool firstInGroup, float beta, int window) {
  const int T = in.shape.T;
  const ConstHeadMat Q = h.q(in.q), K = h.k(in.k), V = h.v(in.v), O = h.q(saved.o);
  const ConstHeadMat dO(g.d_o + h.qOffset(), T, in.shape.dHead);
  HeadMat dQ = h.out(g.d_q), dK = h.kvOut(g.d_k), dV = h.kvOut(g.d_v);
  const float* logSumExp = saved.row_log_sum_exp + h.tokenOffset();
  if (firstInGroup) {
    dK.setZero();
    dV.setZero();
  }
  dQ.setZero();
  thread_local Mat S, dP;
  thread_local Eigen::ArrayXf D;
  D = (dO.array() * O.array()).rowwise().sum();  // D_i = dO_i . o_i
  for (int r0 = 0; r0 < T; r0 += kTileRows) {
    const int rows = std::min(kTileRows, T - r0), end = r0 + rows;
    for (int c0 = firstVisibleKey(r0, window); c0 < end; c0 += kTileKeys) {
      const int cols = std::min(kTileKeys, end - c0);
      tiled::blockScores(in, h, r0, rows, c0, cols, S);
      for (int r = 0; r < rows; ++r)  // S becomes the block's weights: a = exp(beta s - L), 0 where masked
        tiled::weightsFromScores(S.row(r).data(), cols, tiled::visibleSpan(r0 + r, c0, cols, window), beta, logSumExp[r0 + r]);
      tiled::product(dV.middleRows(c0, cols), S, true, dO.middleRows(r0, rows), false, 1.0f, 1.0f);  // from o = A V
      dP.resize(rows, cols);
      tiled::product(dP, dO.middleRows(r0, rows), false, V.middleRows(c0, cols), true);  // dA = dO V^T
      // from a = softmax(z): dz = a (dA - D); from z = beta s: ds = beta dz (0 wherever a is)
      dP = (beta * S.array() * (dP.array().colwise() - D.segment(r0, rows))).matrix();
      tiled::product(dQ.middleRows(r0, rows), dP, false, K.middleRows(c0, cols), false, in.scale, 1.0f);  // from s = scale q.k
      tiled::product(dK.middleRows(c0, cols), dP, true, Q.middleRows(r0, rows), false, in.scale, 1.0f);   // from s = scale q.k
    }
  }
}

// The whole layer, as softmaxAttentionForward / softmaxAttentionBackward without maps.
inline void tiledSoftmaxForward(const AttentionInputs& in, AttentionOutputs& out, float beta, int window) {
  forEachHead(in.shape, [&](const HeadSlices& h) { tiledSoftmaxHeadForward(in, h, out, beta, window); });
}
inline void tiledSoftmaxBackward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& g, float beta, int window) {
  forEachKvGroup(in.shape, [&](const HeadSlices& h, bool first) { tiledSoftmaxHeadBackward(in, saved, g, h, first, beta, window); });
}

}  // namespace attnlab
