#pragma once
// Timing helpers shared by `attnlab-cli bench` and bench/attnlab-bench: timed training steps,
// timed probe traces, median/min/max of repeated measurements and the process's peak memory.
#include <cstddef>
#include <vector>

#include "train/trainer.h"

namespace attnlab {

struct Spread {
  double median = 0, min = 0, max = 0;
};
// Median (mean of the middle two for an even count), min and max; zeros for no values.
Spread spreadOf(std::vector<double> values);

// Sets train.steps and eval_every so that `warmup + steps` steps run without any evaluation
// (only steps are timed) and never reach the end of the run.
void prepareForTiming(ExperimentConfig& config, int warmup, int steps);
struct StepTimes {
  std::vector<double> tokens_per_second;      // wall clock, each step
  std::vector<double> tokens_per_cpu_second;  // per second of this process's CPU time (all threads), each step
};
// Runs `warmup` untimed steps (they size the workspaces and warm the caches), then times each
// of `steps` steps. The CPU-time figure hardly depends on other processes' load at one thread.
StepTimes timeTrainingSteps(Trainer& trainer, int warmup, int steps);
struct TraceTimes {
  std::vector<double> ms;      // wall clock, each trace
  std::vector<double> cpu_ms;  // this process's CPU time (all threads), each trace
};
// Times each of `traces` traces of the trainer's probe, after one untimed trace.
TraceTimes timeProbeTraces(const Trainer& trainer, int traces);

// Peak resident set size of this process so far, in bytes (getrusage's ru_maxrss).
size_t peakResidentBytes();

}  // namespace attnlab
