#pragma once
// One run behind `attnlab-cli study seed-checks`: a toy model trained from a preset for
// one seed, and what the two seed checks read off it:
//   QK spectra by positional encoding (the QK-operator spectrum paper), spectral cases only:
//       every head's QK spectrum and attention-map diagnostics at
//       evenly spaced snapshots over training, step 0 (initialisation) included, with the Ginibre
//       null of the configuration and every head of a fresh model of another seed (the null drawn);
//   head-drop order (the head-importance paper): head importance and the head-drop curves in
//       ascending, descending and random order of importance, after training.
// The study (app/cli/study_seed_checks.cpp) chooses cases, sizes and seeds and writes the report.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/head_importance.h"
#include "analysis/map_diagnostics.h"
#include "analysis/qk_spectrum.h"
#include "experiment/experiment_config.h"

namespace attnlab {

struct SeedCheckCase {
  std::string label;                   // e.g. "induction-rope"
  std::string preset;
  std::vector<std::string> overrides;  // "key=value", applied in order after the preset
  bool spectral = false;               // followed over training (the spectral check)
};

struct HeadSnapshot {
  int step = 0, layer = 0, head = 0;
  MapDiagnostics maps;
  QkSpectrum spectrum;
  double radiusOverNull = 0;  // spectral radius over the null's circular-law radius
};

struct SeedCheckRun {
  SeedCheckCase spec;
  uint64_t seed = 0;
  ExperimentConfig config;  // as trained
  double seconds = 0;       // training and measuring
  double accuracy = 0;      // held-out after training; NaN when the task has no answers
  std::vector<HeadSnapshot> snapshots;  // spectral cases: every head at every snapshot, by step
  std::vector<QkSpectrum> nullDraw;     // spectral cases: every head of the fresh model
  double circularRadius = 0;
  HeadImportanceReport importance;
};

// Trains `spec` from `seed` on `threads` threads; a spectral case takes `snapshots` + 1 evenly
// spaced snapshots (step 0 and the last step included). Throws std::invalid_argument for a bad
// preset or override and DivergenceError (train/trainer.h) when training diverges.
SeedCheckRun runSeedCheck(const SeedCheckCase& spec, uint64_t seed, int threads, int snapshots);

// The head with the highest previous-token score at the run's last snapshot; null without snapshots.
const HeadSnapshot* strongestPreviousTokenHead(const SeedCheckRun& run);

}  // namespace attnlab
