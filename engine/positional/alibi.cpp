#include "positional/alibi.h"

namespace attnlab {
namespace {

// ALiBi: b_h(i, j) = -m_h (i - j); no parameters, extrapolates to any length.
float linearDistance(float d) { return d; }

ATTNLAB_REGISTER(PositionalRegistry, "alibi", "s_ij -= m_h (i - j), m_h = 2^(-8h/H)",
                 [] { return std::make_unique<AlibiBias<linearDistance>>(); });

}  // namespace
}  // namespace attnlab
