#include "model/projection_sharing.h"

namespace attnlab {

std::optional<ProjectionSharing> projectionSharingOf(const std::string& name) {
  if (name == "qkv") return ProjectionSharing{false, false};
  if (name == "q_k=v") return ProjectionSharing{false, true};
  if (name == "q=k_v") return ProjectionSharing{true, false};
  if (name == "q=k=v") return ProjectionSharing{true, true};
  return std::nullopt;
}

}  // namespace attnlab
