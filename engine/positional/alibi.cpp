#include "positional/alibi.h"
#include "positional/positional.h"

namespace attnlab {
namespace {

// P5: b_h(i, j) = -m_h (i - j); no parameters, extrapolates to any length.
class Alibi : public PositionalEncoding {
 public:
  std::string configure(const ModelConfig&, ParamStore&) override { return {}; }
  bool scoreBias() const override { return true; }
  void addScoreBias(int head, int heads, const int* qpos, int Tq, const int* kpos, int Tk, float* out) const override {
    const float slope = static_cast<float>(alibiSlope(head, heads));
    for (int i = 0; i < Tq; ++i)
      for (int j = 0; j < Tk; ++j) out[i * Tk + j] -= slope * static_cast<float>(std::max(0, qpos[i] - kpos[j]));
  }
};

ATTNLAB_REGISTER(PositionalRegistry, "alibi", "s_ij -= m_h (i - j), m_h = 2^(-8h/H)", [] { return std::make_unique<Alibi>(); });

}  // namespace
}  // namespace attnlab
