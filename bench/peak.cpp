#include "peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <ctime>
#include <vector>

namespace attnlab::bench {
namespace {

// Enough independent accumulators to cover an FMA's latency on every port (4 cycles x 2 ports
// on current x86 cores): a chain shorter than that would measure latency, not throughput.
constexpr int kChains = 12;
constexpr long kIterations = 20'000'000;  // about 40 ms a trial at 3 GHz

// Each kernel returns the FLOPs it did; storing its sum in a volatile keeps the loop alive.
volatile float g_sink;
__attribute__((target("avx512f"))) double fmaAvx512() {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * c);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  g_sink = total;
  return 2.0 * 16 * kChains * kIterations;
}

__attribute__((target("avx2,fma"))) double fmaAvx2() {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * c);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  alignas(32) float lanes[8];
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  g_sink = total;
  return 2.0 * 8 * kChains * kIterations;
}

double fmaScalar() {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = 0.001f * c;
  for (long i = 0; i < kIterations / 8; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * 0.999999f + 1e-7f;
  float total = 0;
  for (float v : acc) total += v;
  g_sink = total;
  return 2.0 * kChains * (kIterations / 8);
}

// The thread's own CPU time: on a shared machine the wall clock would count the time the
// scheduler gave to other processes.
double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

}  // namespace

Peak measurePeak(int threads) {
  Peak peak;
  double (*kernel)() = fmaScalar;
  peak.isa = "scalar";
  if (__builtin_cpu_supports("avx512f")) kernel = fmaAvx512, peak.isa = "avx512f";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kernel = fmaAvx2, peak.isa = "avx2+fma";
  constexpr int kTrials = 5;  // the best trial: a shared machine's load only ever lowers it
  std::vector<double> perThread(threads);
  for (int trial = 0; trial < kTrials; ++trial) {
#pragma omp parallel num_threads(threads)
    {
      const double start = threadCpuSeconds();
      const double flops = kernel();
      const double seconds = threadCpuSeconds() - start;
      perThread[omp_get_thread_num()] = flops / seconds / 1e9;
    }
    double mean = 0;
    for (double g : perThread) mean += g / threads;
    peak.gflops_per_core = std::max(peak.gflops_per_core, mean);
  }
  return peak;
}

}  // namespace attnlab::bench
