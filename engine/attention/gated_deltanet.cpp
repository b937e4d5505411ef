#include "attention/deltanet_core.h"

namespace attnlab {
namespace {
ATTNLAB_REGISTER(AttentionRegistry, "gated_deltanet",
                 "S_t = alpha_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T, alpha_t = sigmoid(w_a.k_t + c_a) learned; o_t = S_t q_t",
                 [] { return std::make_unique<DeltaNetAttention>(true); });
}  // namespace
}  // namespace attnlab
