#pragma once
// Shared by ALiBi and its log-distance form: per-head slopes m_h = 2^(-8h/H), h = 1..H.
#include <cmath>

namespace attnlab {

inline double alibiSlope(int head, int heads) { return std::pow(2.0, -8.0 * (head + 1) / heads); }

}  // namespace attnlab
