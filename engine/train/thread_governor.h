#pragma once
// How many of the configured threads a training step uses. On a machine whose other cores are
// busy with other programs, two threads can be slower than one: the second waits for a core, and
// the first waits for it at every join. The governor times the steps: it uses whichever of one
// thread and the configured count ran the recent steps faster, and every kProbeEvery steps runs
// one step at the other count to see whether the machine changed. The weights do not depend on
// the count (the engine splits rows and heads between threads, never a sum), so a run stays the
// same run whatever the load.
namespace attnlab {

class ThreadGovernor {
 public:
  static constexpr long kProbeEvery = 32;

  explicit ThreadGovernor(int configured);

  // The thread count for the next training step.
  int next();
  // A training step's wall time (validation excluded) at the count next() gave.
  void record(int threads, double seconds);
  // The count in use, for work between the steps (probe traces).
  int current() const { return chosen_; }

 private:
  int other(int threads) const { return threads == 1 ? configured_ : 1; }

  int configured_;
  int chosen_;
  double seconds_[2] = {-1, -1};  // recent step time at 1 thread and at configured_; < 0 unknown
  long steps_ = 0;
};

}  // namespace attnlab
