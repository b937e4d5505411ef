#pragma once
// What continuing a run exactly needs beyond its weights and history: the AdamW moments and step
// count (optimizer.safetensors) and the schedule position and the data stream's generator state
// (training_state.json). Saved with every checkpoint; see docs/checkpoint-format.md.
#include <string>

#include "train/trainer.h"

namespace attnlab {

// Writes both files into `folder`. Returns "" or a one-line reason.
std::string writeTrainingState(const std::string& folder, const Trainer& trainer);

// Restores both files into `trainer`, whose weights and history are already loaded. Returns "" or a
// one-line reason naming the file. A folder with neither file (saved before exact resume existed)
// is not an error: `notice` then says that training on restarts the optimiser.
std::string readTrainingState(const std::string& folder, Trainer& trainer, std::string& notice);

}  // namespace attnlab
