#pragma once
// Separate learning rates for the QK and OV circuits of attention, per layer and per step window
// (the circuit-speed papers: faster QK learning sharpens attention; slowing upper-layer QK early helps).
// The QK circuit is W_q and W_k (and W_qk when they are shared), the OV circuit W_v and W_o;
// a tensor serving both (W_kv, W_qkv) and everything else keep the base rate.
#include <string>
#include <vector>

#include "config/train_config.h"
#include "core/params.h"

namespace attnlab {

// (config/train_config.h's validateTrainConfig checks the ratios, layers and step window.)
// True when some ratio differs from 1 (otherwise the optimiser runs exactly as without them).
bool circuitLrActive(const TrainConfig& config);
// The factor on lr for each parameter of `params` (in store order) at 0-based step `step`.
std::vector<float> circuitLrRatios(const ParamStore& params, const TrainConfig& config, int step);

}  // namespace attnlab
