#include "core/openmp_wait.h"

#include <cstdlib>
#include <unistd.h>

namespace attnlab {

void restartWithPassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  // set before the restart, so the new image (and any program it starts) does not restart again
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv("/proc/self/exe", argv);
}

}  // namespace attnlab
