#include "kv/kv_bytes.h"

#include "attention/attention.h"
#include "model/projection_sharing.h"
#include "positional/positional.h"

namespace attnlab {

size_t kvCacheBytesPerToken(const ModelConfig& config, KvQuant quant) {
  const auto sharing = projectionSharingOf(config.projection_sharing);
  // the encoding's rotation, configured on a store of shapes only (nothing allocated)
  ParamStore shapes;
  shapes.setAllocation(Allocation::ShapesOnly);
  const auto positional = PositionalRegistry::instance().create(config.positional);
  const bool rotates = positional && positional->configure(config, shapes).empty() && positional->rotaryPairs() > 0;
  const bool rotatesValues = rotates && positional->rotatesValues();
  const size_t row = RowStore::rowBytes(quant, config.headDim());
  size_t total = 0;
  for (int l = 0; l < config.n_layers; ++l) {
    const auto variant = AttentionRegistry::instance().create(config.attentionOf(l));
    if (variant && !variant->cachesKeysAndValues()) continue;
    if (config.kvSourceOf(l) != l) continue;  // cross-layer KV: a reader holds nothing, its group's first layer holds the rows
    if (sharing && sharing->latent) {  // latent KV: one latent row per token for the layer's heads together
      total += RowStore::rowBytes(quant, config.latentDim());
      continue;
    }
    const bool rotatesKeysAlone = rotates && !rotatesValues && (!variant || variant->usesDotScores());
    const bool valuesAreKeys = sharing && sharing->valueIsKey && !config.value_gate && !rotatesKeysAlone;
    total += (valuesAreKeys ? 1 : 2) * static_cast<size_t>(config.kvHeads()) * row;
  }
  return total;
}

}  // namespace attnlab
