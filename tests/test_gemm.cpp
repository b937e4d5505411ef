// The packed micro-kernel products (core/gemm.h) equal Eigen's: every kernel this processor
// runs, all four transposition cases, odd sizes and sizes below and above the blocks (kc 256,
// nc 512, mc 16 panels), strided views, alpha and beta; rows do not depend on their neighbours.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/gemm.h"
#include "core/random.h"

using namespace attnlab;

namespace {
Mat randomMatrix(int rows, int cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal(0.f, 1.f);
  return m;
}

// Stored shape of an operand whose op() is rows x cols.
gemm::View operand(const Mat& storage, int rows, int cols, bool transposed) {
  gemm::View v = gemm::view(storage.topLeftCorner(transposed ? cols : rows, transposed ? rows : cols));
  return transposed ? v.t() : v;
}

struct Case {
  int M, N, K;
};
const Case kCases[] = {{1, 1, 1},     {3, 5, 2},     {8, 32, 1},    {6, 16, 7},    {9, 33, 257},  {17, 31, 64},
                       {130, 70, 300}, {33, 513, 40}, {5, 1000, 17}, {200, 3, 9},   {257, 600, 530}, {128, 384, 128}, {140, 40, 300}};
}  // namespace

class TestGemm : public QObject {
  Q_OBJECT

  // Every element within float rounding of Eigen's: |c - ref| <= 1e-5 (sum_k |a_ik b_kj| + |beta c0|).
  static void expectClose(const Mat& got, const Mat& ref, const Mat& bound, const QString& what) {
    for (int i = 0; i < got.rows(); ++i)
      for (int j = 0; j < got.cols(); ++j)
        if (!(std::abs(got(i, j) - ref(i, j)) <= 1e-5f * bound(i, j) + 1e-30f))
          QFAIL(qPrintable(QString("%1: C(%2, %3) = %4, Eigen %5").arg(what).arg(i).arg(j).arg(got(i, j)).arg(ref(i, j))));
  }

 private slots:
  void kernelsAreListed() {
    const auto kernels = gemm::supportedKernels();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) QVERIFY(kernels.size() >= 1);
    QVERIFY(gemm::activeKernel() == "eigen" || std::find(kernels.begin(), kernels.end(), gemm::activeKernel()) != kernels.end());
  }

  void everyKernelEqualsEigen() {
    const auto kernels = gemm::supportedKernels();
    if (kernels.empty()) QSKIP("this processor has neither AVX2+FMA nor AVX-512: only Eigen's product runs");
    int checked = 0;
    for (const std::string& kernel : kernels)
      for (const Case& c : kCases)
        for (int transposes = 0; transposes < 4; ++transposes)
          for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, {0.37f, 1.0f}, {-1.5f, -0.5f}}) {
            const bool ta = transposes & 1, tb = transposes & 2;
            // operands inside larger matrices, so rows have a stride wider than the view
            const Mat a = randomMatrix((ta ? c.K : c.M) + 2, (ta ? c.M : c.K) + 3, 11 + checked);
            const Mat b = randomMatrix((tb ? c.N : c.K) + 1, (tb ? c.K : c.N) + 5, 23 + checked);
            const gemm::View A = operand(a, c.M, c.K, ta), B = operand(b, c.K, c.N, tb);
            Mat c0 = randomMatrix(c.M + 1, c.N + 4, 37 + checked);
            if (beta == 0.0f) c0.setConstant(std::numeric_limits<float>::quiet_NaN());  // beta 0 never reads C
            Mat got = c0, ref = c0;
            gemm::multiplyWith(kernel, gemm::mutView(got.topLeftCorner(c.M, c.N)), A, B, alpha, beta);
            gemm::multiplyEigen(gemm::mutView(ref.topLeftCorner(c.M, c.N)), A, B, alpha, beta);
            const Mat opA = ta ? Mat(a.topLeftCorner(c.K, c.M).transpose()) : Mat(a.topLeftCorner(c.M, c.K));
            const Mat opB = tb ? Mat(b.topLeftCorner(c.N, c.K).transpose()) : Mat(b.topLeftCorner(c.K, c.N));
            Mat bound = std::abs(alpha) * (opA.cwiseAbs() * opB.cwiseAbs());
            if (beta != 0.0f) bound += std::abs(beta) * c0.topLeftCorner(c.M, c.N).cwiseAbs();
            const QString what = QString("%1, %2x%3x%4, %5%6, alpha %7, beta %8")
                                     .arg(kernel.c_str()).arg(c.M).arg(c.N).arg(c.K)
                                     .arg(ta ? "A^T" : "A").arg(tb ? " B^T" : " B").arg(alpha).arg(beta);
            expectClose(got.topLeftCorner(c.M, c.N), ref.topLeftCorner(c.M, c.N), bound, what);
            // nothing outside C is touched (NaN compares unequal, so compare bit patterns)
            QVERIFY2(std::memcmp(got.row(c.M).data(), c0.row(c.M).data(), sizeof(float) * c0.cols()) == 0, qPrintable(what));
            for (int i = 0; i < c.M; ++i)
              QVERIFY2(std::memcmp(got.row(i).data() + c.N, c0.row(i).data() + c.N, sizeof(float) * 4) == 0, qPrintable(what));
            ++checked;
          }
    QCOMPARE(checked, static_cast<int>(kernels.size() * std::size(kCases) * 4 * 3));
  }

  // multiply() (the threshold between the kernel and Eigen included) equals Eigen's product.
  void multiplyEqualsEigen() {
    for (const Case& c : kCases) {
      const Mat a = randomMatrix(c.M, c.K, 5), b = randomMatrix(c.N, c.K, 6);
      Mat got(c.M, c.N), ref(c.M, c.N);
      gemm::multiply(gemm::mutView(got), gemm::view(a), gemm::view(b).t());
      gemm::multiplyEigen(gemm::mutView(ref), gemm::view(a), gemm::view(b).t());
      expectClose(got, ref, a.cwiseAbs() * b.cwiseAbs().transpose(), QString("multiply %1x%2x%3").arg(c.M).arg(c.N).arg(c.K));
    }
  }

  // A row's result is bitwise the same alone as inside a product of many rows, wherever the
  // blocking puts it (full panel, edge panel, second block of A): the sums run in one order.
  void rowsDoNotDependOnNeighbours() {
    for (const std::string& kernel : gemm::supportedKernels()) {
      const int M = 150, N = 45, K = 300;
      const Mat x = randomMatrix(M, K, 7), w = randomMatrix(N, K, 8);
      Mat all(M, N);
      gemm::multiplyWith(kernel, gemm::mutView(all), gemm::view(x), gemm::view(w).t());
      for (int i : {0, 5, 7, 127, 128, 149}) {
        Mat one(1, N);
        gemm::multiplyWith(kernel, gemm::mutView(one), gemm::view(x.middleRows(i, 1)), gemm::view(w).t());
        QVERIFY2(std::memcmp(one.data(), all.row(i).data(), sizeof(float) * N) == 0, qPrintable(QString("%1, row %2").arg(kernel.c_str()).arg(i)));
      }
    }
  }

  void mismatchedShapesAreRefused() {
    const Mat a = randomMatrix(4, 5, 1), b = randomMatrix(6, 7, 2);
    Mat c(4, 7);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, gemm::multiply(gemm::mutView(c), gemm::view(a), gemm::view(b)));
    for (const std::string& kernel : gemm::supportedKernels())
      QVERIFY_THROWS_EXCEPTION(std::logic_error, gemm::multiplyWith(kernel, gemm::mutView(c), gemm::view(a), gemm::view(b)));
    const Mat square = randomMatrix(4, 4, 3);
    Mat product(4, 4);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             gemm::multiplyWith("nonesuch", gemm::mutView(product), gemm::view(square), gemm::view(square)));
  }
};

QTEST_APPLESS_MAIN(TestGemm)
#include "test_gemm.moc"
