// The pattern hook point of an attention layer. Replacing a head's weights means recomputing its
// output from them, o_i = sum_j a_ij v_j, which holds for every variant whose output is the weighted
// sum of its values; a variant for which it does not hold is refused rather than patched wrongly.
#include <algorithm>
#include <stdexcept>

#include "model/attention_layer.h"

namespace attnlab {

void hookPattern(ForwardHooks* hooks, int layer, const std::string& variant, AttentionActs& a) {
  if (!hooks->wants(HookSite::attn_pattern, layer)) return;
  const AttentionShape& s = a.shape;
  const std::vector<float> before = a.weights;
  hooks->at({HookSite::attn_pattern, layer, a.weights.data(), s.B, s.T, s.H, s.T, true});
  const size_t mapSize = static_cast<size_t>(s.T) * s.T, rows = static_cast<size_t>(s.T) * s.dHead;
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < s.H; ++h) {
      const size_t mapOff = (static_cast<size_t>(b) * s.H + h) * mapSize;
      // Unchanged weights keep the variant's own output bit for bit (patching a run onto itself is exact).
      if (std::equal(before.begin() + mapOff, before.begin() + mapOff + mapSize, a.weights.begin() + mapOff)) continue;
      const ConstMatMap oldWeights(before.data() + mapOff, s.T, s.T), newWeights(a.weights.data() + mapOff, s.T, s.T);
      const ConstMatMap values(a.v.data() + (static_cast<size_t>(b) * s.Hkv + h / s.group()) * rows, s.T, s.dHead);
      MatMap out(a.o.data() + (static_cast<size_t>(b) * s.H + h) * rows, s.T, s.dHead);
      const float scale = 1.0f + out.cwiseAbs().maxCoeff();
      if ((oldWeights * values - out).cwiseAbs().maxCoeff() > 1e-3f * scale)
        throw std::invalid_argument("the pattern of '" + variant + "' attention cannot be patched: its output is not the weighted sum of its values");
      out = newWeights * values;
    }
}

}  // namespace attnlab
