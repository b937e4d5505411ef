#include "model/projection_sharing.h"

#include "positional/positional.h"

namespace attnlab {

std::optional<ProjectionSharing> projectionSharingOf(const std::string& name) {
  if (name == "qkv") return ProjectionSharing{false, false};
  if (name == "q_k=v") return ProjectionSharing{false, true};
  if (name == "q=k_v") return ProjectionSharing{true, false};
  if (name == "q=k=v") return ProjectionSharing{true, true};
  if (name == "latent") return ProjectionSharing{false, false, true};
  return std::nullopt;
}

const std::vector<ProjectionSharingInfo>& projectionSharingCatalogue() {
  static const std::vector<ProjectionSharingInfo> modes = {
      {"qkv", "q = W_q x, k = W_k x, v = W_v x: three projections (standard)"},
      {"q_k=v", "q = W_q x, k = v = W_kv x: keys and values share one projection (one cached tensor per token)"},
      {"q=k_v", "q = k = W_qk x, v = W_v x: queries are keys, so scores are symmetric before masking"},
      {"q=k=v", "q = k = v = W_qkv x: a single projection"},
      {"latent", "c = W_DKV x, k = W_UK c, v = W_UV c: keys and values from one latent of kv_latent_dim; the cache holds c (MLA)"},
  };
  return modes;
}

std::string validateLatentKv(const ModelConfig& config) {
  const auto sharing = projectionSharingOf(config.projection_sharing);
  const bool latent = sharing && sharing->latent;
  if (!latent) return config.kv_latent_dim == 0 ? "" : "model.kv_latent_dim acts only with model.projection_sharing = latent";
  if (config.kv_latent_dim < 0 || config.latentDim() < 1 || config.latentDim() > 4096)
    return "model.kv_latent_dim must be in [1, 4096] (0 means d_model / 4)";
  ParamStore shapes;  // the encoding's rotation, configured on a store of shapes only
  shapes.setAllocation(Allocation::ShapesOnly);
  const auto positional = PositionalRegistry::instance().create(config.positional);
  if (positional && positional->configure(config, shapes).empty() && positional->rotaryPairs() > 0)
    return "latent KV does not combine with the rotary encoding '" + config.positional +
           "': a rotation between q and W_UK breaks the absorbed form (MLA's decoupled rope key is not built)";
  return {};
}

}  // namespace attnlab
