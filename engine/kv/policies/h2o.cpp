#include <cmath>

#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

const SettingSpec kRecent{"recent_ratio", 0.5, 0, 1, false, "share of the budget given to the most recent positions"};

// H2O: a recent window of floor(r B) entries, the rest by the largest attention received so
// far (summed over every past query and the KV head's query heads: "heavy hitters").
class H2oPolicy : public EvictionPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kRecent}; }
  std::string configure(const Settings& s, const ModelConfig&) override {
    recentRatio_ = settingOr(s, kRecent);
    return {};
  }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    const int recent = static_cast<int>(std::floor(recentRatio_ * view.budget));
    for (int i = 0; i < view.cache.size(); ++i) {
      score[i] = view.cache.accumulated[i];
      protect[i] = view.cache.positions[i] > view.position - recent;
    }
  }
  std::string budgetRule() const override { return "least accumulated attention outside the recent window"; }

 private:
  double recentRatio_ = 0.5;
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "h2o", "keep a recent window plus the heavy hitters (largest attention received so far)",
                 [] { return std::make_unique<H2oPolicy>(); });

}  // namespace
}  // namespace attnlab
