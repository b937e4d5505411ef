#include "worker_priority.h"

#ifdef __linux__
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <unistd.h>
#endif

namespace attnlab {

namespace {
int uiNiceness = 0;  // read on the UI thread at start-up, before any worker exists
#ifdef __linux__
const bool uiNicenessRead = [] {
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, 0);
  if (errno == 0) uiNiceness = now;
  return true;
}();
#endif
}  // namespace

void runBelowTheUi() {
#ifdef __linux__
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), std::min(19, uiNiceness + kWorkerNicenessAboveUi));
#endif
}

}  // namespace attnlab
