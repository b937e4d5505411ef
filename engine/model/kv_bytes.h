#pragma once
// Size of the decoding cache a configuration needs (catalogue A9, seed 000's R5 study).
#include <cstddef>

#include "model/config.h"

namespace attnlab {

// Bytes the KV cache holds per token, summed over layers. A layer whose variant caches keys and
// values stores Hkv x d_head float32 for K and as many for V, or one tensor when K and V share a
// projection (q_k=v, q=k=v: the value is recomputed from the stored key before rotation and value
// gate). A variant that decodes from a constant-size state (linear attention) stores nothing
// per token and counts 0. Projection sharing of queries does not change the cache.
size_t kvCacheBytesPerToken(const ModelConfig& config);

}  // namespace attnlab
