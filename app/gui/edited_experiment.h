#pragma once
// An experiment the user changed in the panel keeps neither the preset's name nor its description
// unmarked: the name says "(edited)" (unless the user renamed it) and the description becomes one
// line of what changed, so the window title, the autosave folder and the label's tooltip never
// present edited settings as the preset's own.
#include "experiment/experiment_config.h"

namespace attnlab {

// `edited` as the panel read it from `from` (the applied experiment). Unchanged settings: `edited`
// as it is. Changed: its name marked when it is still `from`'s, its description the changes.
ExperimentConfig markedAsEdited(ExperimentConfig edited, const ExperimentConfig& from);

// "model.d_model 64 → 96, train.batch 16 → 32" for the single values that differ (at most four,
// then "and N more"), plus "attention settings" and the like for changed settings maps.
std::string describeChanges(const ExperimentConfig& from, const ExperimentConfig& to);

}  // namespace attnlab
