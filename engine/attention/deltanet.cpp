#include "attention/deltanet_core.h"

namespace attnlab {
namespace {
ATTNLAB_REGISTER(AttentionRegistry, "deltanet",
                 "S_t = S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T, |k_t| = 1, beta_t = sigmoid(w.k_t + c); o_t = S_t q_t",
                 [] { return std::make_unique<DeltaNetAttention>(false); });
}  // namespace
}  // namespace attnlab
