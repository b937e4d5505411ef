#include <limits>

#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

const SettingSpec kThreshold{"threshold", 0.5, 0, 1, false, "without a budget: entries with g below it are removed"};
const SettingSpec kKeepRecent{"keep_recent", 0, 0, 1e6, true, "w: the most recent w positions always stay"};

// The learned gate: the retention gate applied hard. Without a budget an entry whose g (the largest over
// its KV head's query heads) is below the threshold is removed; with a budget the top B by g stay.
// Kept entries still carry their soft g into the attention, as in training, so a threshold of 0
// reproduces the dense model exactly.
class LearnedGatePolicy : public EvictionPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kThreshold, kKeepRecent}; }
  std::string configure(const Settings& s, const ModelConfig& model) override {
    if (!model.retention_gate) return "eviction policy 'learned_gate' needs a model trained with model.retention_gate = true";
    threshold_ = static_cast<float>(settingOr(s, kThreshold));
    keepRecent_ = static_cast<int>(settingOr(s, kKeepRecent));
    return {};
  }
  bool needsBudget() const override { return false; }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    const HeadCache& c = view.cache;
    for (int i = 0; i < c.size(); ++i) {
      const float g = c.gate(i);
      score[i] = view.budgeted || g >= threshold_ ? g : -std::numeric_limits<float>::infinity();
      protect[i] = c.positions[i] > view.position - keepRecent_;
    }
  }
  std::string budgetRule() const override { return "lowest gate g (top-B)"; }
  std::string dropRule() const override { return "gate g below the threshold"; }
  KeptAs scoredAs() const override { return KeptAs::gate; }

 private:
  float threshold_ = 0.5f;
  int keepRecent_ = 0;
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "learned_gate", "the retention gate applied hard: remove entries with g < threshold, or keep the top B by g",
                 [] { return std::make_unique<LearnedGatePolicy>(); });

}  // namespace
}  // namespace attnlab
