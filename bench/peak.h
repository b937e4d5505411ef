#pragma once
// This machine's float32 peak, measured: an FMA throughput kernel (independent chains of fused
// multiply-adds on the widest vectors the processor runs), so a model's FLOP/s can be given as a
// share of what the cores can do.
#include <string>

namespace attnlab::bench {

struct Peak {
  double gflops_per_core = 0;  // float32 GFLOP/s per second of a thread's CPU time, the best of several trials
  std::string isa;             // "avx512f", "avx2+fma" or "scalar"
};

// Runs the kernel on `threads` threads at once and reports the mean per thread of its FLOPs per
// second of that thread's CPU time: what a core does while it runs the thread, however loaded the
// machine is (a core's two hyperthreads would each show about half).
Peak measurePeak(int threads);

}  // namespace attnlab::bench
