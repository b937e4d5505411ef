#pragma once
// Packed single-precision matrix products with this engine's own micro-kernels (AVX-512 or
// AVX2+FMA, chosen at run time from what the processor supports), for the hot products of the
// linear layers, the attention heads and the LM head. Without either instruction set, or for
// products too small to repay the packing, Eigen computes them: the plain path the fast ones are
// tested against (tests/test_gemm.cpp).
//
// Every element of C is accumulated over k in the same order whatever its row or column, edge
// tiles included, so a row's result does not depend on where the blocking puts it.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attnlab::gemm {

// A row-major matrix in memory: rows x cols, `stride` floats between rows, optionally read
// transposed (op(M) = M^T: rows and cols then swap).
struct View {
  const float* data = nullptr;
  int rows = 0, cols = 0, stride = 0;
  bool transposed = false;
  int opRows() const { return transposed ? cols : rows; }
  int opCols() const { return transposed ? rows : cols; }
  View t() const { return {data, rows, cols, stride, !transposed}; }
};
struct MutView {
  float* data = nullptr;
  int rows = 0, cols = 0, stride = 0;
};

// Views of row-major Eigen matrices, maps and blocks (contiguous rows).
template <class E>
View view(const E& m) {
  static_assert(E::IsRowMajor, "gemm views are row-major");
  return {m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()), static_cast<int>(m.outerStride()), false};
}
template <class E>
MutView mutView(E&& m) {
  return {m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()), static_cast<int>(m.outerStride())};
}

// C = alpha op(A) op(B) + beta C (beta 0: C is only written, never read). Shapes must agree.
void multiply(MutView C, View A, View B, float alpha = 1.0f, float beta = 0.0f);

// The same with Eigen's product: the reference path.
void multiplyEigen(MutView C, View A, View B, float alpha = 1.0f, float beta = 0.0f);

// The micro-kernels this processor can run, fastest first ("avx512", "avx2"); empty without either.
std::vector<std::string> supportedKernels();
// multiply() with a named kernel and no size threshold: for tests and benchmarks.
void multiplyWith(const std::string& kernel, MutView C, View A, View B, float alpha = 1.0f, float beta = 0.0f);
// The kernel multiply() uses, or "eigen".
std::string activeKernel();

}  // namespace attnlab::gemm
