#pragma once
// accumulated_rotation with omega_mode 1 turns each token by increments drawn once per token id
// from the model's seed: a table that is not a parameter (the lab rebuilds it from the seed), so a
// model leaving the engine (the PyTorch export) carries it as omega_table.safetensors beside its
// weights: one tensor "omega_table" [vocab, rotary pairs], float32, the engine's values exactly.
#include <string>

#include "model/model.h"

namespace attnlab {

inline constexpr const char* kFixedAngleTableFile = "omega_table.safetensors";

// True when the model's positional encoding turns tokens by such a fixed per-token table.
bool hasFixedAngleTable(const Model& model);
// Writes <dir>/omega_table.safetensors for such a model (nothing otherwise); "" or a one-line reason.
std::string writeFixedAngleTable(const std::string& dir, const Model& model);

}  // namespace attnlab
