#include "train/thread_governor.h"

#include <algorithm>

namespace attnlab {

namespace {
constexpr double kSmoothing = 0.25;  // weight of the newest step in the running time
}

ThreadGovernor::ThreadGovernor(int configured) : configured_(std::max(1, configured)), chosen_(configured_) {}

int ThreadGovernor::next() {
  if (configured_ == 1) return 1;
  ++steps_;
  return steps_ % kProbeEvery == 0 ? other(chosen_) : chosen_;
}

void ThreadGovernor::record(int threads, double seconds) {
  if (configured_ == 1 || !(seconds > 0)) return;
  double& recent = seconds_[threads == 1 ? 0 : 1];
  // A probe's single step replaces what is known of its count, which may be many steps old.
  recent = recent < 0 || threads != chosen_ ? seconds : (1 - kSmoothing) * recent + kSmoothing * seconds;
  if (seconds_[0] > 0 && seconds_[1] > 0) chosen_ = seconds_[0] < seconds_[1] ? 1 : configured_;
}

}  // namespace attnlab
