#pragma once
// This machine's training speed in FLOP per second, measured by timing a few steps of a small
// fixed experiment, so that any experiment's time per step can be estimated before it trains
// (its trainingFlopsPerStep over the rate). An estimate: real steps differ with the model's shape
// (a wide matrix product runs faster per FLOP than many small ones) and with the machine's load.
#include "experiment/experiment_config.h"

namespace attnlab {

// The experiment timed: the engine's default experiment (the toy language) made small, about a
// tenth of a second per step here.
ExperimentConfig stepRateExperiment(int threads);

// Times steps of stepRateExperiment(threads) after one untimed step (which allocates), for at
// least `seconds` of steps, and returns FLOP per second.
double measureTrainingFlopsPerSecond(int threads, double seconds = 0.3);

}  // namespace attnlab
