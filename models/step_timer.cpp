#include "step_timer.h"

#include <limits>

namespace attnlab {

void StepTimer::add(double seconds) {
  if (!warmedUp_) {
    warmedUp_ = true;
    return;
  }
  if (count_ == kWindow) sum_ -= window_[next_];
  else ++count_;
  window_[next_] = seconds;
  sum_ += seconds;
  next_ = (next_ + 1) % kWindow;
}

double StepTimer::secondsPerStep() const {
  return settled() ? sum_ / static_cast<double>(count_) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace attnlab
