#pragma once
// What the PyTorch export's package builds: resources/attnlab_torch/members.json, one list that
// attnlab-cli export reads to refuse, before writing anything, an experiment holding a member the
// package does not build (attention variant, positional encoding, their settings, gates and other
// option values, model and training keys), and that the package checks its own tables against.
#include <string>

#include "experiment/experiment_config.h"

namespace attnlab {

// "" when attnlab_torch builds `config` exactly, else one line naming the first member it does
// not (with members.json's reason when "refused" lists one). `membersJson` is members.json's text.
std::string torchExportRefusal(const ExperimentConfig& config, const std::string& membersJson);

}  // namespace attnlab
