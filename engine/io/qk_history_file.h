#pragma once
// The checkpoint's thinned history of query and key projections (train/qk_weight_history.h):
// qk_history.json, {"format": "attnlab-qk-history", "version": 1, "stride", "steps": [..]}, and
// qk_history.safetensors holding "step<N>.<tensor name>" for each step and each projection, written
// and read by the checkpoint's safetensors functions. Both files are absent when the history is
// empty (and in checkpoints saved before it existed, which open with no spectra past).
#include <string>

#include "train/trainer.h"

namespace attnlab {

std::string writeQkHistory(const std::string& folder, const Trainer& trainer);
// Restores the trainer's history; "" (also when there is none) or a one-line reason naming the file.
std::string readQkHistory(const std::string& folder, Trainer& trainer);

}  // namespace attnlab
