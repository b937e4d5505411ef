#pragma once
// Size of the decoding cache a configuration needs (projection sharing, and the projection-sharing study).
#include <cstddef>

#include "kv/row_store.h"
#include "config/model_config.h"

namespace attnlab {

// Bytes the KV cache holds per token, summed over layers, as the decoder stores them (engine/kv):
// a layer whose variant caches keys and values holds Hkv rows of K and as many of V, each
// RowStore::rowBytes(quant, d_head) (4 d_head for fp32). One tensor only where the stored values
// equal the stored keys: a shared projection (q_k=v, q=k=v) with no value gate and no rotation of
// the keys alone (RoPE turns keys, not values, unless values rotate too). A variant that decodes
// from a constant-size state (linear attention, DeltaNet) stores nothing per token and counts 0.
// With latent KV a layer holds one latent row per token, rowBytes(quant, d_c) (4 d_c for fp32).
// With cross-layer KV (model.kv_share_group) only the first layer of each group holds rows.
size_t kvCacheBytesPerToken(const ModelConfig& config, KvQuant quant = KvQuant::fp32);

}  // namespace attnlab
