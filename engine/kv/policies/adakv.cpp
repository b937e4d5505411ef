#include <algorithm>
#include <cstdint>
#include <limits>

#include "kv/policies/snapkv_scores.h"

namespace attnlab {
namespace {

const SettingSpec kSafeguard{"safeguard", 0.2, 0, 1, false,
                             "alpha: each head keeps at least alpha x its uniform budget, whatever the other heads score"};

// AdaKV (Feng et al. 2024, as kvpress's AdaKVPress around SnapKV): per-head adaptive budgets. The
// entries are scored as SnapKV scores them, then a layer's KV heads compete for the layer's total
// budget (B x heads) by score, so a head whose attention is concentrated gives entries to one whose
// attention is spread out. Safeguard: each head's floor(alpha B) best entries score the largest
// float, so no head is emptied.
class AdaKvPolicy : public SnapKvPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    auto specs = SnapKvPolicy::settingSpecs();
    specs.push_back(kSafeguard);
    return specs;
  }
  std::string configure(const Settings& s, const ModelConfig& model) override {
    safeguard_ = settingOr(s, kSafeguard);
    return SnapKvPolicy::configure(s, model);
  }
  bool poolsHeads() const override { return true; }

  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    SnapKvPolicy::score(view, score, protect);
    const int n = static_cast<int>(score.size());
    const int safe = std::min(n, static_cast<int>(safeguard_ * view.budget));
    if (!view.budgeted || safe <= 0) return;
    // The floor is a set: selecting it (linear time) suffices, its order does not matter. Ties go
    // to the later position, so the set is the same on every run. Each entry's rank is one integer
    // beside its index, so comparing two entries is one comparison and reads no other memory.
    ranked_.resize(n);
    for (int i = 0; i < n; ++i) ranked_[i] = {rankKey(score[i], view.cache.positions[i]), i};
    std::nth_element(ranked_.begin(), ranked_.begin() + (safe - 1), ranked_.end(),
                     [](const Entry& a, const Entry& b) { return a.key > b.key; });
    for (int r = 0; r < safe; ++r) score[ranked_[r].index] = std::numeric_limits<float>::max();  // the head's floor
  }
  std::string budgetRule() const override { return "least pooled attention among all of the layer's heads (adaptive per-head budget)"; }

 private:
  double safeguard_ = 0.2;
  // Orders as (score, then position) does, larger first. Scores are sums of attention weights: never NaN.
  static uint64_t rankKey(float score, int position) {
    return (static_cast<uint64_t>(orderedScoreBits(score)) << 32) | static_cast<uint32_t>(position);
  }
  struct Entry {
    uint64_t key;
    int index;
  };
  std::vector<Entry> ranked_;  // reused from step to step
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "adakv",
                 "SnapKV scores; a layer's heads share its budget by score (adaptive per-head budgets, floor alpha B each)",
                 [] { return std::make_unique<AdaKvPolicy>(); });

}  // namespace
}  // namespace attnlab
