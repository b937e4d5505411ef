#include "analysis/seed_checks.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "analysis/analysis.h"
#include "io/config_json.h"
#include "train/trainer.h"

namespace attnlab {

namespace {

ExperimentConfig configOf(const SeedCheckCase& spec, uint64_t seed, int threads) {
  ExperimentConfig config;
  if (std::string why = loadPreset(spec.preset, config); !why.empty()) throw std::invalid_argument(spec.label + ": " + why);
  for (const std::string& assignment : spec.overrides)
    if (std::string why = applyOverride(config, assignment); !why.empty()) throw std::invalid_argument(spec.label + ": " + why);
  config.train.seed = seed;
  config.train.threads = threads;
  config.train.eval_every = 0;
  config.train.warmup = std::min(config.train.warmup, config.train.steps / 4);
  return config;
}

void takeSnapshot(Trainer& trainer, MapDiagnosticsProbe& probe, SeedCheckRun& run) {
  const ModelConfig& c = trainer.config().model;
  const auto maps = probe.measure(trainer.model());
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      const HeadProjections p = headProjections(c, trainer.model().params(), l, h);
      HeadSnapshot s{trainer.stepsDone(), l, h, maps[l][h], qkSpectrumOf(p.wq, p.wk, ropeFrequencies(c, l)), 0};
      s.radiusOverNull = s.spectrum.spectral_radius / run.circularRadius;
      run.snapshots.push_back(std::move(s));
    }
}

}  // namespace

SeedCheckRun runSeedCheck(const SeedCheckCase& spec, uint64_t seed, int threads, int snapshots) {
  const auto start = std::chrono::steady_clock::now();
  SeedCheckRun run;
  run.spec = spec;
  run.seed = seed;
  Trainer trainer(configOf(spec, seed, threads));
  run.config = trainer.config();
  const ModelConfig& c = run.config.model;
  const int steps = run.config.train.steps;
  if (spec.spectral) {
    const Model fresh(c, seed + 1000);  // the null drawn: same configuration, another seed
    run.circularRadius = ginibreNull(c, fresh.params()).circular_radius;
    run.nullDraw = qkSpectrumSeries(c, {&fresh.params()}).front();
    MapDiagnosticsProbe probe(trainer.task(), c.vocab, trainer.sequenceLength(), 16, seed + 7);
    const int every = std::max(1, steps / std::max(1, snapshots));
    for (;;) {
      if (trainer.stepsDone() % every == 0 || trainer.finished()) takeSnapshot(trainer, probe, run);
      if (trainer.finished()) break;
      trainer.trainStep();
    }
  } else {
    while (!trainer.finished()) trainer.trainStep();
  }
  const bool answers = trainer.task().hasAnswers();
  run.accuracy = answers ? trainer.evaluate(8).accuracy : std::numeric_limits<double>::quiet_NaN();
  run.importance = headImportanceReport(trainer.model(), validationBatches(trainer, 4, seed), answers, seed);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

const HeadSnapshot* strongestPreviousTokenHead(const SeedCheckRun& run) {
  if (run.snapshots.empty()) return nullptr;
  const int last = run.snapshots.back().step;
  const HeadSnapshot* best = nullptr;
  for (const HeadSnapshot& s : run.snapshots)
    if (s.step == last && (!best || s.maps.previous_token > best->maps.previous_token)) best = &s;
  return best;
}

}  // namespace attnlab
