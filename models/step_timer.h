#pragma once
// The wall time per training step as the progress bar reports it: the mean of the last kWindow
// steps, so the occasional slow step (validation, a trace, a busy machine) moves the time-left
// estimate by its share of the window instead of swinging it (an average of the newest steps
// alone would jump each time validation runs). The first step is not counted: it allocates the
// buffers and publishes the first trace, and alone it once made a 2,000-step run say 3:34:01
// left. Until kSettled steps are timed there is no estimate (NaN: the bar shows --:--).
#include <cstddef>
#include <vector>

namespace attnlab {

class StepTimer {
 public:
  static constexpr size_t kWindow = 64;
  static constexpr size_t kSettled = 3;

  void add(double seconds);
  bool settled() const { return count_ >= kSettled; }
  double secondsPerStep() const;  // mean of the window; NaN until settled
  double secondsLeft(int stepsLeft) const { return stepsLeft * secondsPerStep(); }

 private:
  bool warmedUp_ = false;  // the first step was seen (and left out)
  std::vector<double> window_ = std::vector<double>(kWindow, 0.0);  // a ring of step times
  size_t next_ = 0, count_ = 0;
  double sum_ = 0;
};

}  // namespace attnlab
