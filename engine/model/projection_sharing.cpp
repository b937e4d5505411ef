#include "model/projection_sharing.h"

namespace attnlab {

std::optional<ProjectionSharing> projectionSharingOf(const std::string& name) {
  if (name == "qkv") return ProjectionSharing{false, false};
  if (name == "q_k=v") return ProjectionSharing{false, true};
  if (name == "q=k_v") return ProjectionSharing{true, false};
  if (name == "q=k=v") return ProjectionSharing{true, true};
  return std::nullopt;
}

const std::vector<ProjectionSharingInfo>& projectionSharingCatalogue() {
  static const std::vector<ProjectionSharingInfo> modes = {
      {"qkv", "q = W_q x, k = W_k x, v = W_v x: three projections (standard)"},
      {"q_k=v", "q = W_q x, k = v = W_kv x: keys and values share one projection (one cached tensor per token)"},
      {"q=k_v", "q = k = W_qk x, v = W_v x: queries are keys, so scores are symmetric before masking"},
      {"q=k=v", "q = k = v = W_qkv x: a single projection"},
  };
  return modes;
}

}  // namespace attnlab
