#include "core/tensor.h"
#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

// K-norm: keep the keys of lowest L2 norm (low-norm keys tend to draw the most attention).
class KNormPolicy : public EvictionPolicy {
 public:
  std::string configure(const Settings&, const ModelConfig&) override { return {}; }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>&) override {
    const HeadCache& c = view.cache;
    const float* keys = c.readKeys(scratch_);
    for (int i = 0; i < c.size(); ++i) score[i] = -ConstMatMap(keys + static_cast<size_t>(i) * c.dHead, 1, c.dHead).norm();
  }
  std::string budgetRule() const override { return "largest key norm"; }

 private:
  std::vector<float> scratch_;  // decoded keys of a quantised cache
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "k_norm", "keep the keys of lowest L2 norm", [] { return std::make_unique<KNormPolicy>(); });

}  // namespace
}  // namespace attnlab
