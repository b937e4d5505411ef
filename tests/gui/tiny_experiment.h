#pragma once
// The default preset made small, so a few training steps take well under a second.
#include <QtGlobal>

#include "io/config_json.h"

namespace attnlab::testing {

inline ExperimentConfig tinyConfig(int steps) {
  ExperimentConfig config;
  if (!loadPreset("default", config).empty()) qFatal("default preset");
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64", "model.context=24",
                        "train.batch=4", "train.eval_every=10"})
    if (!applyOverride(config, o).empty()) qFatal("override %s", o);
  config.train.steps = steps;
  return config;
}

}  // namespace attnlab::testing
