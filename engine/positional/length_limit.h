#pragma once
// Length extrapolation: which sequence lengths a model can run. Beyond the training context every
// positional encoding extrapolates except those that know only the trained positions (a learned
// table of context rows); such an encoding says so from its own file with
//   static const bool limited = declarePositionLimited("learned");
#include <string>

#include "config/model_config.h"

namespace attnlab {

// Marks the encoding `name` as defined only for positions below the context. Returns true.
bool declarePositionLimited(const std::string& name);

// "" when a model of `config` can run sequences of T tokens, else the one-line reason, naming the
// encodings that would extrapolate.
std::string lengthRefusal(const ModelConfig& config, int T);

}  // namespace attnlab
