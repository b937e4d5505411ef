#include <immintrin.h>

#include "core/gemm_kernels.h"

namespace attnlab::gemm {
namespace {

constexpr int MR = 6, NR = 16;

// 12 accumulators (6 rows x 2 vectors) of the 16 registers; per k: two loads of B, six
// broadcasts of A, 12 FMAs.
template <bool kColumnsA>
__attribute__((target("avx2,fma"))) void run(int kc, const float* a, long lda, const float* b, float* c, long ldc, bool add) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int k = 0; k < kc; ++k, b += NR) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(kColumnsA ? a + k * lda + i : a + i * lda + k);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i, c += ldc) {
    if (add) {
      acc[i][0] = _mm256_add_ps(_mm256_loadu_ps(c), acc[i][0]);
      acc[i][1] = _mm256_add_ps(_mm256_loadu_ps(c + 8), acc[i][1]);
    }
    _mm256_storeu_ps(c, acc[i][0]);
    _mm256_storeu_ps(c + 8, acc[i][1]);
  }
}

}  // namespace

const MicroKernel kAvx2Kernel{"avx2", MR, NR, run<true>, run<false>};

}  // namespace attnlab::gemm
