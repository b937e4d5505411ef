#include "train/benchmark.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>

namespace attnlab {

Spread spreadOf(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return {median, values.front(), values.back()};
}

void prepareForTiming(ExperimentConfig& config, int warmup, int steps) {
  config.train.steps = warmup + steps + 1;  // never reaches the end-of-run evaluation
  config.train.eval_every = 0;              // nor any periodic one
}

namespace {
double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
}  // namespace

StepTimes timeTrainingSteps(Trainer& trainer, int warmup, int steps) {
  for (int i = 0; i < warmup; ++i) trainer.trainStep();
  StepTimes times;
  for (int i = 0; i < steps; ++i) {
    const double cpuStart = processCpuSeconds();
    const TrainPoint point = trainer.trainStep();
    const double cpu = processCpuSeconds() - cpuStart;
    times.tokens_per_second.push_back(point.tokens_per_second);
    const double tokens = point.tokens_per_second * point.seconds;
    times.tokens_per_cpu_second.push_back(cpu > 0 ? tokens / cpu : 0.0);
  }
  return times;
}

TraceTimes timeProbeTraces(const Trainer& trainer, int traces) {
  const std::vector<int> probe = trainer.probeTokens();
  trainer.trace(probe);  // warm-up, not timed
  TraceTimes times;
  for (int i = 0; i < traces; ++i) {
    const double cpuStart = processCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    trainer.trace(probe);
    times.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    times.cpu_ms.push_back(1000.0 * (processCpuSeconds() - cpuStart));
  }
  return times;
}

size_t peakResidentBytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace attnlab
