#pragma once
// The micro-kernels behind gemm.h (one file per instruction set, each compiled for its own
// target). A micro-kernel multiplies an MR x kc panel of A by a packed kc x NR panel of B,
// b[k * NR + j] = B(k, j), and stores (add false) or adds (add true) the MR x NR result into C,
// ldc floats between rows. The panel of A is read either as columns, a[k * lda + i] = A(i, k)
// (`columns`: a packed panel with lda = MR, or a transposed matrix read in place), or as rows,
// a[i * lda + k] = A(i, k) (`rows`: a row-major matrix read in place). Both sum over k in the
// same order, so the three ways of reading give bitwise the same C.
namespace attnlab::gemm {

struct MicroKernel {
  const char* name;
  int mr, nr;
  using Run = void (*)(int kc, const float* a, long lda, const float* b, float* c, long ldc, bool add);
  Run columns, rows;
};

extern const MicroKernel kAvx512Kernel;  // 8 x 32, two 16-float vectors per row
extern const MicroKernel kAvx2Kernel;    // 6 x 16, two 8-float vectors per row

}  // namespace attnlab::gemm
