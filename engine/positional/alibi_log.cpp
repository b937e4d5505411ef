#include "positional/alibi.h"

namespace attnlab {
namespace {

// ALiBi with log distance: b_h(i, j) = -m_h log(1 + i - j). Far penalties grow slowly, so low-precision
// exponentials underflow far less than under linear ALiBi (the ALiBi underflow paper).
float logDistance(float d) { return std::log1p(d); }

ATTNLAB_REGISTER(PositionalRegistry, "alibi_log", "s_ij -= m_h log(1 + i - j), m_h = 2^(-8h/H)",
                 [] { return std::make_unique<AlibiBias<logDistance>>(); });

}  // namespace
}  // namespace attnlab
