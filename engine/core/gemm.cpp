#include "core/gemm.h"
// GCC 12 reports false "may be used uninitialized" warnings inside its AVX-512 intrinsics in
// Eigen's packing code (as for engine/analysis, see engine/CMakeLists.txt).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/gemm_kernels.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace attnlab::gemm {
namespace {

// Blocking (Goto's scheme): a kc x nc block of B is packed once and stays in L2 (256 x 512
// floats: 512 KiB), an mc x kc block of A is packed into MR-row panels, and each MR x kc panel
// (8 KiB) stays in L1 while the kernel walks the NR-column panels of B.
constexpr int KC = 256, NC = 512, kPanelsPerBlockOfA = 16;

// 64-byte aligned scratch for the packed panels, one per thread, grown as needed.
class Scratch {
 public:
  ~Scratch() { std::free(data_); }
  float* get(size_t floats) {
    if (floats > size_) {
      std::free(data_);
      const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
      data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!data_) throw std::bad_alloc();
      size_ = bytes / sizeof(float);
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};
thread_local Scratch packedA, packedB;

// Stored rows [r0, r0 + count) of a row-major matrix, columns [c0, c0 + width) of each, times
// `scale`, into panels of `panel` columns: panel p holds out[k * panel + j] = scale M(r0 + k,
// c0 + p panel + j), zero past `width`. Stored row by stored row, each read once from left to
// right into every panel: panel by panel, each row was fetched in pieces far apart in time, and
// the packing stalled on memory.
void packRowsIntoPanels(const View& M, int r0, int count, int c0, int width, int panel, float scale, float* out) {
  for (int k = 0; k < count; ++k) {
    const float* src = M.data + static_cast<size_t>(r0 + k) * M.stride + c0;
    for (int p0 = 0; p0 < width; p0 += panel) {
      float* dst = out + static_cast<size_t>(p0) * count + static_cast<size_t>(k) * panel;
      const int n = std::min(panel, width - p0);
      if (n == panel)
        for (int j = 0; j < panel; ++j) dst[j] = scale * src[p0 + j];
      else
        for (int j = 0; j < panel; ++j) dst[j] = j < n ? scale * src[p0 + j] : 0.0f;
    }
  }
}

// Rows [i0, i0 + mc) and columns [k0, k0 + kc) of op(A), in MR-row panels: panel p holds
// out[k * MR + i] = op(A)(i0 + p MR + i, k0 + k), zero past the last row.
void packA(const View& A, int i0, int mc, int k0, int kc, int MR, float* out) {
  // op(A)(i, k) = A(k, i): each stored row k holds a run of i
  if (A.transposed) return packRowsIntoPanels(A, k0, kc, i0, mc, MR, 1.0f, out);
  for (int ip = 0; ip < mc; ip += MR, out += static_cast<size_t>(MR) * kc) {
    const int rows = std::min(MR, mc - ip);
    for (int i = 0; i < MR; ++i) {
      const float* src = A.data + static_cast<size_t>(i0 + ip + i) * A.stride + k0;
      for (int k = 0; k < kc; ++k) out[k * MR + i] = i < rows ? src[k] : 0.0f;
    }
  }
}

#if defined(__AVX__)
// dst[r * dstStride + j] = alpha src[j * srcStride + r] for r, j < 8: eight runs of 8 floats,
// transposed with the usual unpack, shuffle and lane-permute steps (each output a column).
void transpose8x8(const float* src, size_t srcStride, float alpha, float* dst, size_t dstStride) {
  const __m256 scale = _mm256_set1_ps(alpha);
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_mul_ps(scale, _mm256_loadu_ps(src + i * srcStride));
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // r_i[0] r_i+1[0] r_i[1] r_i+1[1] | the same at 4, 5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // at 2, 3 | at 6, 7
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));      // four rows' elements 0 | 4
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));  // 1 | 5
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));  // 2 | 6
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));  // 3 | 7
  }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + c * dstStride, _mm256_permute2f128_ps(u[c], u[c + 4], 0x20));
    _mm256_storeu_ps(dst + (c + 4) * dstStride, _mm256_permute2f128_ps(u[c], u[c + 4], 0x31));
  }
}
#endif

// Rows [k0, k0 + kc) and columns [j0, j0 + nc) of alpha op(B), in NR-column panels: panel p
// holds out[k * NR + j] = alpha op(B)(k0 + k, j0 + p NR + j), zero past the last column.
void packB(const View& B, int k0, int kc, int j0, int nc, int NR, float alpha, float* out) {
  if (!B.transposed) return packRowsIntoPanels(B, k0, kc, j0, nc, NR, alpha, out);
  // op(B)(k, j) = B(j, k): each stored row j holds a run of k.
  for (int jp = 0; jp < nc; jp += NR, out += static_cast<size_t>(NR) * kc) {
    const int cols = std::min(NR, nc - jp);
    // In runs of 16 k: the panel (kc x NR floats, up to 32 KiB) would not stay in L1 if each j
    // wrote down all of it, while 16 rows of it (2 KiB) do.
    constexpr int kRun = 16;
    for (int k = 0; k < kc; k += kRun) {
      const int run = std::min(kRun, kc - k);
      int j = 0;
#if defined(__AVX__)
      // Whole 8 x 8 blocks transposed in registers (the weights of a short forward, a trace or
      // a prefill, are packed this way on every call); the rest element by element.
      if (run == kRun)
        for (; j + 8 <= cols; j += 8)
          for (int r = 0; r < kRun; r += 8)
            transpose8x8(B.data + static_cast<size_t>(j0 + jp + j) * B.stride + k0 + k + r, B.stride, alpha,
                         out + static_cast<size_t>(k + r) * NR + j, NR);
#endif
      for (; j < NR; ++j) {
        const float* src = B.data + static_cast<size_t>(j0 + jp + j) * B.stride + k0 + k;
        float* dst = out + static_cast<size_t>(k) * NR + j;
        for (int r = 0; r < run; ++r) dst[r * NR] = j < cols ? alpha * src[r] : 0.0f;
      }
    }
  }
}

void checkShapes(const MutView& C, const View& A, const View& B) {
  if (A.opRows() != C.rows || B.opCols() != C.cols || A.opCols() != B.opRows())
    throw std::logic_error("gemm: shapes do not agree: C " + std::to_string(C.rows) + "x" + std::to_string(C.cols) + ", op(A) " +
                           std::to_string(A.opRows()) + "x" + std::to_string(A.opCols()) + ", op(B) " +
                           std::to_string(B.opRows()) + "x" + std::to_string(B.opCols()));
}

// C *= beta over its rows (beta 0 writes zeros, never reading C).
void scale(MutView C, float beta) {
  for (int i = 0; i < C.rows; ++i) {
    float* row = C.data + static_cast<size_t>(i) * C.stride;
    for (int j = 0; j < C.cols; ++j) row[j] = beta == 0.0f ? 0.0f : beta * row[j];
  }
}

void packedProduct(const MicroKernel& kernel, MutView C, const View& A, const View& B, float alpha, float beta) {
  const int M = C.rows, N = C.cols, K = A.opCols(), MR = kernel.mr, NR = kernel.nr, MC = MR * kPanelsPerBlockOfA;
  if (M == 0 || N == 0) return;
  if (K == 0 || alpha == 0.0f) return scale(C, beta);
  if (beta != 0.0f && beta != 1.0f) {
    scale(C, beta);
    beta = 1.0f;
  }
  const size_t ldc = C.stride;
  // Rows of a non-transposed A are read in place: packing cost up to a fifth of the time of the
  // products with few columns (measured, attnlab-bench --gemm). A transposed A is packed when the
  // kernel reads each panel many times (in place, each k of its panel a different stored row, dW's
  // product measured no faster), and read in place when at most two column panels of B take all of
  // C: an attention tile's dK or dV, where packing was a third of the product's time (59 -> 88
  // GFLOP/s with AVX-512, 43 -> 57 with AVX2 on a 64 x 32 x 64 tile). An edge panel of
  // fewer than MR rows is always packed, padded with zeros, so the kernel never reads past A.
  const bool packWholeA = A.transposed && N > 2 * NR;
  float* a = packedA.get(static_cast<size_t>(MC) * KC);
  float* b = packedB.get(static_cast<size_t>((NC + NR - 1) / NR * NR) * KC);
  alignas(64) float tile[16 * 32];  // an edge tile: the kernel's full MR x NR result, of which part is kept
  for (int jc = 0; jc < N; jc += NC) {
    const int nc = std::min(NC, N - jc);
    for (int pc = 0; pc < K; pc += KC) {
      const int kc = std::min(KC, K - pc);
      const bool add = pc > 0 || beta != 0.0f;
      packB(B, pc, kc, jc, nc, NR, alpha, b);
      for (int ic = 0; ic < M; ic += MC) {
        const int mc = std::min(MC, M - ic);
        if (packWholeA) packA(A, ic, mc, pc, kc, MR, a);
        for (int ir = 0; ir < mc; ir += MR) {
          const int rows = std::min(MR, mc - ir);
          const float* aPanel = a + static_cast<size_t>(ir) * kc;
          MicroKernel::Run run = kernel.columns;
          long lda = MR;
          if (!packWholeA && rows == MR) {
            // op(A)(i, k) is A.data[i * stride + k], or A.data[k * stride + i] when transposed
            aPanel = A.transposed ? A.data + static_cast<size_t>(pc) * A.stride + ic + ir
                                  : A.data + static_cast<size_t>(ic + ir) * A.stride + pc;
            run = A.transposed ? kernel.columns : kernel.rows;
            lda = A.stride;
          } else if (!packWholeA) {
            packA(A, ic + ir, rows, pc, kc, MR, a);
            aPanel = a;
          }
          for (int jr = 0; jr < nc; jr += NR) {
            const int cols = std::min(NR, nc - jr);
            const float* bPanel = b + static_cast<size_t>(jr) * kc;
            float* c = C.data + (ic + ir) * ldc + jc + jr;
            if (rows == MR && cols == NR) {
              run(kc, aPanel, lda, bPanel, c, static_cast<long>(ldc), add);
              continue;
            }
            // The same sums as a full tile, then c + tile as the kernel's own add does: edge
            // elements round exactly as inner ones.
            run(kc, aPanel, lda, bPanel, tile, NR, false);
            for (int i = 0; i < rows; ++i)
              for (int j = 0; j < cols; ++j) c[i * ldc + j] = add ? c[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];
          }
        }
      }
    }
  }
}

const MicroKernel* kernelNamed(const std::string& name) {
  if (name == "avx512" && __builtin_cpu_supports("avx512f")) return &kAvx512Kernel;
  if (name == "avx2" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &kAvx2Kernel;
  return nullptr;
}

// The kernel multiply() uses: ATTNLAB_GEMM (avx512, avx2 or eigen) when set and supported,
// else the first supported one of supportedKernels(); null means Eigen.
const MicroKernel* chosenKernel() {
  static const MicroKernel* chosen = [] {
    const std::vector<std::string> supported = supportedKernels();
    const MicroKernel* best = supported.empty() ? nullptr : kernelNamed(supported.front());
    if (const char* forced = std::getenv("ATTNLAB_GEMM"); forced && *forced) {
      if (std::string(forced) == "eigen") return static_cast<const MicroKernel*>(nullptr);
      if (const MicroKernel* k = kernelNamed(forced)) return k;
      std::fprintf(stderr, "attnlab: ATTNLAB_GEMM=%s is not a kernel this processor runs (avx512, avx2 or eigen); using %s\n",
                   forced, best ? best->name : "eigen");
    }
    return best;
  }();
  return chosen;
}

// Below about 32 K multiply-adds, or for fewer rows than a panel holds, packing costs more than
// the kernel saves over Eigen (which then often runs a matrix-vector product).
bool worthPacking(int M, int N, int K, const MicroKernel& kernel) {
  return M >= kernel.mr / 2 && N >= 8 && static_cast<double>(M) * N * K >= 32768.0;
}

}  // namespace

std::vector<std::string> supportedKernels() {
  std::vector<std::string> names;
  for (const char* name : {"avx512", "avx2"})
    if (kernelNamed(name)) names.push_back(name);
  return names;
}

std::string activeKernel() {
  const MicroKernel* k = chosenKernel();
  return k ? k->name : "eigen";
}

void multiply(MutView C, View A, View B, float alpha, float beta) {
  checkShapes(C, A, B);
  const MicroKernel* kernel = chosenKernel();
  if (kernel && worthPacking(C.rows, C.cols, A.opCols(), *kernel)) packedProduct(*kernel, C, A, B, alpha, beta);
  else multiplyEigen(C, A, B, alpha, beta);
}

void multiplyWith(const std::string& name, MutView C, View A, View B, float alpha, float beta) {
  checkShapes(C, A, B);
  const MicroKernel* kernel = kernelNamed(name);
  if (!kernel) throw std::invalid_argument("gemm: kernel '" + name + "' is not supported on this processor");
  packedProduct(*kernel, C, A, B, alpha, beta);
}

void multiplyEigen(MutView C, View A, View B, float alpha, float beta) {
  checkShapes(C, A, B);
  using Strided = Eigen::OuterStride<>;
  using ConstStrided = Eigen::Map<const Mat, 0, Strided>;
  Eigen::Map<Mat, 0, Strided> c(C.data, C.rows, C.cols, Strided(C.stride));
  const ConstStrided a(A.data, A.rows, A.cols, Strided(A.stride)), b(B.data, B.rows, B.cols, Strided(B.stride));
  const auto into = [&](const auto& left, const auto& right) {
    if (beta == 0.0f) {
      c.noalias() = alpha * left * right;
      return;
    }
    if (beta != 1.0f) c *= beta;
    c.noalias() += alpha * left * right;
  };
  if (!A.transposed && !B.transposed) into(a, b);
  else if (!A.transposed) into(a, b.transpose());
  else if (!B.transposed) into(a.transpose(), b);
  else into(a.transpose(), b.transpose());
}

}  // namespace attnlab::gemm
