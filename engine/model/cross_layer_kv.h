#pragma once
// Cross-layer KV sharing (cross-layer attention of Brandon et al. 2024): with
// model.kv_share_group = G > 1, consecutive groups of G layers (the last may be shorter) attend
// over one set of keys and values. The group's first layer, its source, computes K/V from its own
// input as usual; the others, its readers, have no W_k/W_v (nor k/v biases) and read the source's
// K/V after its value gate and rotation; their queries stay their own. The decoding cache holds
// one K/V per group, and eviction policies score the source layer's attention only.
// AttentionLayer's share of it is in cross_layer_kv.cpp.
#include <string>

#include "config/model_config.h"

namespace attnlab {

// "" when `config` can share K/V across layers as asked (or does not), else one line saying why.
// Refused with G > 1: latent KV (it already shares one latent per layer), queries that are keys (a
// reader has no key projection), variants that differ within a group, variants decoding from a
// constant-size state instead of a cache, key gates (retention gate, presence: the shared cache
// holds one gate per entry, each layer's would differ) and rotary angles learned per layer (a
// reader's queries would turn by other angles than the keys it reads).
std::string validateCrossLayerKv(const ModelConfig& config);

}  // namespace attnlab
