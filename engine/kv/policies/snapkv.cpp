#include "kv/policies/snapkv_scores.h"

namespace attnlab {
namespace {

ATTNLAB_REGISTER(EvictionPolicyRegistry, "snapkv",
                 "keep the observation window plus the keys it attends to most (max-pooled over neighbours)",
                 [] { return std::make_unique<SnapKvPolicy>(); });

}  // namespace
}  // namespace attnlab
