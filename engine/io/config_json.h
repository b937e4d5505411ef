#pragma once
// ExperimentConfig <-> JSON, presets, and --set key=value overrides.
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace attnlab {

std::string configToJson(const ExperimentConfig& config);  // pretty-printed
// Returns "" on success, else a one-line reason (bad JSON, unknown key, wrong type).
std::string configFromJson(const std::string& text, ExperimentConfig& out);

// Names of the presets embedded from resources/presets, in display order.
std::vector<std::string> presetNames();
// Returns "" and fills `out`, or a reason listing the known presets.
std::string loadPreset(const std::string& name, ExperimentConfig& out);

// Applies one "section.key=value" override, e.g. "model.d_model=64", "train.lr=1e-3",
// "model.attention=softmax,sigmoid", "model.positional_settings.theta=500", "task.name=induction".
std::string applyOverride(ExperimentConfig& config, const std::string& assignment);

// The keys of every single value (not the settings maps), "name" and "model.d_model" alike: the one
// table the JSON, --set and the app's experiment panel share.
std::vector<std::string> configFieldKeys();
// The value of `key` as applyOverride reads it back (applyOverride(c, key + "=" + text) changes
// nothing). "" and `text` set, or the reason (unknown key, or a settings map).
std::string configFieldText(const ExperimentConfig& config, const std::string& key, std::string& text);

}  // namespace attnlab
