#pragma once
// The ALiBi family: b_h(i, j) = -m_h f(i - j) with per-head slopes m_h = 2^(-8h/H), h = 1..H,
// and a distance transform f (identity for ALiBi, log1p for its log-distance form).
#include <algorithm>
#include <cmath>

#include "positional/positional.h"

namespace attnlab {

inline double alibiSlope(int head, int heads) { return std::pow(2.0, -8.0 * (head + 1) / heads); }

template <float (*Distance)(float)>
class AlibiBias : public PositionalEncoding {
 public:
  std::string configure(const ModelConfig&, ParamStore&) override { return {}; }
  bool scoreBias() const override { return true; }
  void addScoreBias(int head, int heads, const int* qpos, int Tq, const int* kpos, int Tk, float* out) const override {
    const float slope = static_cast<float>(alibiSlope(head, heads));
    for (int i = 0; i < Tq; ++i)
      for (int j = 0; j < Tk; ++j) out[i * Tk + j] -= slope * Distance(static_cast<float>(std::max(0, qpos[i] - kpos[j])));
  }
};

}  // namespace attnlab
