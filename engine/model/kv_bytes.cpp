#include "model/kv_bytes.h"

#include "attention/attention.h"
#include "model/projection_sharing.h"

namespace attnlab {

size_t kvCacheBytesPerToken(const ModelConfig& config) {
  const auto sharing = projectionSharingOf(config.projection_sharing);
  const size_t tensors = sharing && sharing->valueIsKey ? 1 : 2;
  const size_t perLayer = tensors * static_cast<size_t>(config.kvHeads()) * config.headDim() * sizeof(float);
  size_t total = 0;
  for (int l = 0; l < config.n_layers; ++l) {
    const auto variant = AttentionRegistry::instance().create(config.attentionOf(l));
    if (!variant || variant->cachesKeysAndValues()) total += perLayer;
  }
  return total;
}

}  // namespace attnlab
