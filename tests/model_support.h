#pragma once
// Small models for the engine tests: the shape most invariant tests share, parameters perturbed
// far from their initial values, and one sequence run with trace capture on.
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "experiment/experiment_config.h"
#include "model/model.h"
#include "model/workspace.h"

namespace attnlab::testing {

// 2 layers x 4 heads, d_model 16, d_ff 32: big enough for grouped heads and hybrids, quick to run.
inline ModelConfig smallConfig(const std::string& attention, const std::string& positional, int vocab = 9, int context = 12) {
  ModelConfig c;
  c.vocab = vocab;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 4;
  c.d_ff = 32;
  c.context = context;
  c.attention = {attention};
  c.positional = positional;
  return c;
}

// Perturbs every parameter to random values of a healthy scale, so that no map is near uniform
// and no gradient trivially zero.
inline void randomiseParams(Model& model, uint64_t seed, float stddev = 0.4f) {
  Rng rng(seed);
  for (auto& p : model.params().all())
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, stddev);
}

inline std::unique_ptr<Model> randomisedModel(const ModelConfig& c, float stddev = 0.3f) {
  auto model = std::make_unique<Model>(c, 3);
  randomiseParams(*model, 17, stddev);
  return model;
}

// 30 quick steps of the toy language with the retention gate under sparsity pressure `lambda`
// (the model's vocabulary comes from the task).
inline ExperimentConfig gatedToyLanguage(ModelConfig model, double lambda) {
  ExperimentConfig e;
  e.model = std::move(model);
  e.model.vocab = 0;
  e.model.retention_gate = true;
  e.model.retention_sparsity = lambda;
  e.task.name = "toy_language";
  e.train.steps = 30;
  e.train.batch = 8;
  e.train.warmup = 0;
  e.train.lr = 1e-2;
  e.train.threads = 1;
  return e;
}

inline Trace traceOf(const Model& model, const std::vector<int>& tokens) {
  auto ws = makeWorkspace();
  std::vector<int> targets(tokens.size(), -1);
  Trace trace;
  model.forward(*ws, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()), &trace);
  return trace;
}

}  // namespace attnlab::testing
