#include <immintrin.h>

#include "core/gemm_kernels.h"

namespace attnlab::gemm {
namespace {

constexpr int MR = 8, NR = 32;

// 16 accumulators (8 rows x 2 vectors); per k: two loads of B, eight broadcasts of A, 16 FMAs.
template <bool kColumnsA>
__attribute__((target("avx512f"))) void run(int kc, const float* a, long lda, const float* b, float* c, long ldc, bool add) {
  __m512 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int k = 0; k < kc; ++k, b += NR) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(kColumnsA ? a[k * lda + i] : a[i * lda + k]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i, c += ldc) {
    if (add) {
      acc[i][0] = _mm512_add_ps(_mm512_loadu_ps(c), acc[i][0]);
      acc[i][1] = _mm512_add_ps(_mm512_loadu_ps(c + 16), acc[i][1]);
    }
    _mm512_storeu_ps(c, acc[i][0]);
    _mm512_storeu_ps(c + 16, acc[i][1]);
  }
}

}  // namespace

const MicroKernel kAvx512Kernel{"avx512", MR, NR, run<true>, run<false>};

}  // namespace attnlab::gemm
