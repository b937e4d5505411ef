#include "step_timer.h"

namespace attnlab {

void StepTimer::add(double seconds) {
  if (count_ == kWindow) sum_ -= window_[next_];
  else ++count_;
  window_[next_] = seconds;
  sum_ += seconds;
  next_ = (next_ + 1) % kWindow;
}

void StepTimer::clear() {
  next_ = count_ = 0;
  sum_ = 0;
}

double StepTimer::secondsPerStep() const { return count_ == 0 ? 0 : sum_ / static_cast<double>(count_); }

}  // namespace attnlab
