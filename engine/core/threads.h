#pragma once
// The engine's calls into OpenMP, so that a build without it (ATTNLAB_OPENMP=OFF: the
// ThreadSanitizer build, since Debian's libgomp is not instrumented and its joins are invisible to
// TSan) compiles and runs on one thread; its `#pragma omp` lines are then ignored.
#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnlab {

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

inline void setThreadCount(int threads) {
#ifdef _OPENMP
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

}  // namespace attnlab
