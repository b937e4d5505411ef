// Cross-layer KV sharing (model/cross_layer_kv.h): the refusals, and AttentionLayer's share of it.
// A reader's k, v are its source's after value gate and rotation, so forward hands them over as
// they are, and backward sends the reader's dK, dV back to the source, which adds them to its own
// before undoing its rotation and value gate: the source's W_k, W_v receive every reader's gradient.
#include "model/cross_layer_kv.h"

#include <stdexcept>

#include "attention/attention.h"
#include "model/attention_layer.h"
#include "model/projection_sharing.h"
#include "positional/positional.h"

namespace attnlab {

std::string validateCrossLayerKv(const ModelConfig& config) {
  const int G = config.kv_share_group;
  if (G < 0 || G > std::max(1, config.n_layers))
    return "model.kv_share_group must be in [0, n_layers] (0 or 1 means every layer has its own K/V)";
  if (G <= 1) return {};
  const std::string what = "cross-layer KV (model.kv_share_group = " + std::to_string(G) + ")";
  const auto sharing = projectionSharingOf(config.projection_sharing);
  if (sharing && sharing->latent) return what + " does not combine with latent KV, which already shares one latent per layer";
  if (sharing && sharing->queryIsKey)
    return what + " does not combine with projection_sharing '" + config.projection_sharing + "': a reader has no key projection to take its queries from";
  if (config.retention_gate) return what + " does not combine with the retention gate: each layer's key gate would differ over the one shared cache";
  for (int l = 0; l < config.n_layers; ++l) {
    const std::string& name = config.attentionOf(l);
    if (name != config.attentionOf(config.kvSourceOf(l)))
      return what + ": layers " + std::to_string(config.kvSourceOf(l)) + " and " + std::to_string(l) +
             " share K/V but differ in attention variant (" + config.attentionOf(config.kvSourceOf(l)) + ", " + name + ")";
    const auto variant = AttentionRegistry::instance().create(name);
    if (variant && !variant->cachesKeysAndValues())
      return what + " does not combine with '" + name + "', which decodes from a per-layer state instead of a KV cache";
    if (variant && variant->needsPresence())
      return what + " does not combine with '" + name + "': its presence key gate differs per layer over the one shared cache";
  }
  ParamStore shapes;  // the encoding, configured on a store of shapes only
  shapes.setAllocation(Allocation::ShapesOnly);
  const auto positional = PositionalRegistry::instance().create(config.positional);
  if (positional && positional->configure(config, shapes).empty() && positional->rotaryAnglesNeedGradient())
    return what + " does not combine with rotary angles learned per layer ('" + config.positional +
           "'): a reader's queries would turn by other angles than the keys it reads";
  return {};
}

void AttentionLayer::readSourceKv(AttentionActs& a) const {
  const AttentionActs* source = a.kv_source;
  if (!source || source->k.size() != a.shape.kvSize())
    throw std::invalid_argument("layer " + std::to_string(layer_) + " reads the keys and values of layer " +
                                std::to_string(kvSource_) + ", which must run first in the same pass");
  a.k = source->k;  // after the source's rotation
  a.v = source->v;  // after the source's value gate and rotation
}

void AttentionLayer::sendKvGradsToSource(const std::vector<float>& dK, const std::vector<float>& dV, AttentionActs& a) const {
  // from k_reader = k_source, v_reader = v_source: the source's dK, dV gain the reader's
  auto add = [](std::vector<float>& into, const std::vector<float>& g) {
    if (into.empty()) into.assign(g.size(), 0.0f);
    for (size_t i = 0; i < g.size(); ++i) into[i] += g[i];
  };
  add(a.kv_source->dk_from_readers, dK);
  add(a.kv_source->dv_from_readers, dV);
}

void AttentionLayer::addReadersKvGrads(AttentionActs& a, std::vector<float>& dK, std::vector<float>& dV) const {
  if (a.dk_from_readers.empty()) return;  // no reader ran a backward (or none exists)
  for (size_t i = 0; i < dK.size(); ++i) dK[i] += a.dk_from_readers[i];
  for (size_t i = 0; i < dV.size(); ++i) dV[i] += a.dv_from_readers[i];
  a.dk_from_readers.clear();
  a.dv_from_readers.clear();
}

}  // namespace attnlab
