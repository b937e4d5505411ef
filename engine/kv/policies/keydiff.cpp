#include <cmath>

#include "core/tensor.h"
#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

// KeyDiff: score -cos(k_j, mean k) over the head's live keys: keys most like the mean go
// first, so the cache keeps diverse keys. Keys are the cached ones (after rotation).
class KeyDiffPolicy : public EvictionPolicy {
 public:
  std::string configure(const Settings&, const ModelConfig&) override { return {}; }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>&) override {
    const HeadCache& c = view.cache;
    const int n = c.size(), d = c.dHead;
    const ConstMatMap K(c.readKeys(scratch_), n, d);
    const RowVec mean = K.colwise().mean();
    const float meanNorm = mean.norm();
    for (int i = 0; i < n; ++i) {
      const float denom = K.row(i).norm() * meanNorm;
      score[i] = denom > 0 ? -K.row(i).dot(mean) / denom : 0.0f;
    }
  }
  std::string budgetRule() const override { return "key most similar to the mean key"; }

 private:
  std::vector<float> scratch_;  // decoded keys of a quantised cache
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "keydiff", "evict the keys most similar to the mean key (score -cos(k_j, mean k))",
                 [] { return std::make_unique<KeyDiffPolicy>(); });

}  // namespace
}  // namespace attnlab
