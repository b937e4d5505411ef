#include "train/step_rate.h"

#include <chrono>
#include <stdexcept>

#include "train/memory_estimate.h"
#include "train/trainer.h"

namespace attnlab {

ExperimentConfig stepRateExperiment(int threads) {
  ExperimentConfig c;  // the engine's defaults: the toy language (presets live above this folder, in io/)
  c.model.d_model = 64;
  c.model.n_layers = 2;
  c.model.d_ff = 256;
  c.model.context = 64;
  c.train.batch = 8;
  c.train.steps = 1000;  // never reached: the timing stops first
  c.train.eval_every = 0;
  c.train.threads = threads;
  return c;
}

double measureTrainingFlopsPerSecond(int threads, double seconds) {
  const ExperimentConfig config = stepRateExperiment(threads);
  MemoryEstimate e;
  if (std::string why = estimateMemory(config, e); !why.empty()) throw std::runtime_error("step rate: " + why);
  Trainer trainer(config);
  trainer.trainStep();
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  int steps = 0;
  double elapsed = 0;
  while (steps < 2 || elapsed < seconds) {
    trainer.trainStep();
    ++steps;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return trainingFlopsPerStep(config, e) * steps / elapsed;
}

}  // namespace attnlab
