#pragma once
// The wall time per training step as the progress bar reports it: the mean of the last kWindow
// steps, so the occasional slow step (validation, a trace, a busy machine) moves the time-left
// estimate by its share of the window instead of swinging it (an average of the newest steps
// alone would jump each time validation runs).
#include <cstddef>
#include <vector>

namespace attnlab {

class StepTimer {
 public:
  static constexpr size_t kWindow = 64;

  void add(double seconds);
  void clear();
  bool empty() const { return count_ == 0; }
  double secondsPerStep() const;  // mean of the window; 0 when empty
  double secondsLeft(int stepsLeft) const { return stepsLeft * secondsPerStep(); }

 private:
  std::vector<double> window_ = std::vector<double>(kWindow, 0.0);  // a ring of step times
  size_t next_ = 0, count_ = 0;
  double sum_ = 0;
};

}  // namespace attnlab
