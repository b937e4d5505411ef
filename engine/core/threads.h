#pragma once
// The engine's calls into OpenMP, so that a build without it (ATTNLAB_OPENMP=OFF: the
// ThreadSanitizer build, since Debian's libgomp is not instrumented and its joins are invisible to
// TSan) compiles and runs on one thread; its `#pragma omp` lines are then ignored.
#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnlab {

// Below about this many multiply-adds a parallel loop runs on one thread: waking a sleeping thread
// (the passive wait policy, core/openmp_wait.h) and joining it costs tens of microseconds, more than
// half of such a loop saves. A probe trace's products and heads fall below it; a training batch's not.
constexpr double kMinParallelMultiplyAdds = 8.0e6;

inline int maxThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

inline bool inParallelRegion() {
#ifdef _OPENMP
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

// Runs body(i) for every i in [0, n): over OpenMP's threads when `worthThreads` and not already
// inside a parallel region, otherwise as a plain loop. A region whose `if` clause is false still
// enters libgomp (a call and, once a wider team has run, a futex wake): that was about a fifth of a
// decoding step, whose layer norms and GELUs each see one row.
template <class Body>
void forEachIndex(int n, bool worthThreads, Body&& body) {
  if (worthThreads && n > 1 && maxThreads() > 1 && !inParallelRegion()) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) body(i);
    return;
  }
  for (int i = 0; i < n; ++i) body(i);
}

inline void setThreadCount(int threads) {
#ifdef _OPENMP
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

}  // namespace attnlab
