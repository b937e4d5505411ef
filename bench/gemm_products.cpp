#include "gemm_products.h"

#include <ctime>
#include <functional>
#include <string>

#include "core/gemm.h"
#include "core/random.h"

namespace attnlab::bench {
namespace {

struct Shape {
  const char* what;
  int M, N, K;
  bool ta, tb;  // op(A) = A^T, op(B) = B^T
};

// Rows are one thread's share at 1 thread; attention blocks are the causal 32-row blocks of a
// pass with maps and the 64 x 64 tiles of training's attention without maps.
const Shape kShapes[] = {
    {"default: q/k/v/o forward x W^T", 2048, 128, 128, false, true},
    {"default: fc forward x W^T", 2048, 512, 128, false, true},
    {"default: proj backward dx = dy W", 2048, 128, 512, false, false},
    {"default: fc backward dW += dy^T x", 512, 128, 2048, true, false},
    {"default: attention scores Q K^T (32-row block)", 32, 128, 32, false, true},
    {"default: attention values A V (32-row block)", 32, 32, 128, false, false},
    {"default: attention dV += A^T dO", 128, 32, 32, true, false},
    {"default: tiled attention scores Q K^T (64 x 64 block)", 64, 64, 32, false, true},
    {"default: tiled attention values S V (64 x 64 block)", 64, 32, 64, false, false},
    {"default: tiled attention dK += dS^T Q (64 x 64 block)", 64, 32, 64, true, false},
    {"larger: fc forward x W^T", 4096, 1024, 256, false, true},
    {"larger: fc backward dW += dy^T x", 1024, 256, 4096, true, false},
    {"gpt2 prefill: qkv x W^T", 512, 2304, 768, false, true},
    {"gpt2 prefill: mlp proj x W^T", 512, 768, 3072, false, true},
    {"gpt2 prefill: attention scores Q K^T (32-row block)", 32, 512, 64, false, true},
    {"gpt2 prefill: LM head, 64 of 512 rows", 64, 50257, 768, false, true},
};

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

Mat randomMatrix(int rows, int cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal(0.f, 1.f);
  return m;
}

// GFLOP/s of thread CPU time, the best of three runs of at least `seconds` each.
double gflops(const Shape& s, const std::function<void()>& product, double seconds) {
  product();  // warm the caches and the packing buffers
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const double start = threadCpuSeconds();
    long calls = 0;
    do {
      product();
      ++calls;
    } while (threadCpuSeconds() - start < seconds / 3);
    best = std::max(best, 2.0 * s.M * s.N * s.K * calls / (threadCpuSeconds() - start) / 1e9);
  }
  return best;
}

}  // namespace

std::vector<nlohmann::json> timeGemmProducts(double secondsPerCase) {
  Eigen::setNbThreads(1);  // as the engine runs it: one product per thread
  std::vector<nlohmann::json> lines;
  for (const Shape& s : kShapes) {
    const Mat a = s.ta ? randomMatrix(s.K, s.M, 1) : randomMatrix(s.M, s.K, 1);
    const Mat b = s.tb ? randomMatrix(s.N, s.K, 2) : randomMatrix(s.K, s.N, 2);
    Mat c(s.M, s.N);
    const gemm::View A = s.ta ? gemm::view(a).t() : gemm::view(a), B = s.tb ? gemm::view(b).t() : gemm::view(b);
    nlohmann::json line = {{"shape", s.what}, {"M", s.M}, {"N", s.N}, {"K", s.K}};
    line["eigen_gflops"] = gflops(s, [&] { gemm::multiplyEigen(gemm::mutView(c), A, B); }, secondsPerCase);
    for (const std::string& kernel : gemm::supportedKernels())
      line[kernel + "_gflops"] = gflops(s, [&] { gemm::multiplyWith(kernel, gemm::mutView(c), A, B); }, secondsPerCase);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace attnlab::bench
