#pragma once
// SnapKV's scores, shared by snapkv.cpp and the budget-allocation policies that rank entries
// the same way and differ in how many each head or layer keeps (adakv.cpp, pyramidkv.cpp).
#include <algorithm>
#include <deque>
#include <map>

#include "kv/eviction_policy.h"

namespace attnlab {

inline const SettingSpec kSnapWindow{"window", 8, 1, 4096, true, "w: the observation window, the last w queries (their keys always stay)"};
inline const SettingSpec kSnapKernel{"kernel", 5, 1, 63, true, "width in positions of the max-pooling over neighbouring keys"};

// SnapKV, decoding form: keys are scored by the attention the last w queries (the
// observation window) gave them, max-pooled over keys within kernel / 2 positions so that
// neighbours of important keys stay too; the window's own keys are kept. (The original scores
// once, after the prompt; here the window slides with every step, so it also works while decoding.)
class SnapKvPolicy : public EvictionPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kSnapWindow, kSnapKernel}; }
  std::string configure(const Settings& s, const ModelConfig&) override {
    window_ = static_cast<int>(settingOr(s, kSnapWindow));
    halfKernel_ = static_cast<int>(settingOr(s, kSnapKernel)) / 2;
    return {};
  }
  void reset() override { observed_.clear(); }

  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    const HeadCache& c = view.cache;
    const int n = c.size();
    // this query's weights by position (mean over the group's heads, as the cache's `latest`)
    auto& history = observed_[{view.layer, view.kvHead}];
    std::vector<float> weightsNow;  // the oldest query's buffer, when it leaves the window, is reused
    if (static_cast<int>(history.size()) >= window_) {
      weightsNow = std::move(history.front());
      history.pop_front();
    }
    weightsNow.assign(view.position + 1, 0.0f);
    for (int i = 0; i < n; ++i) weightsNow[c.positions[i]] = c.latest[i];
    history.push_back(std::move(weightsNow));
    windowRows_.clear();  // the window's queries, oldest first, as (weights, length): no deque walk per entry
    for (const auto& weights : history) windowRows_.push_back({weights.data(), static_cast<int>(weights.size())});
    std::vector<float>& observation = observation_;
    observation.resize(n);
    for (int i = 0; i < n; ++i) {  // each entry's sum in a register, in the window's order
      const int at = c.positions[i];
      float sum = 0.0f;
      for (const auto& [weights, length] : windowRows_)
        if (at < length) sum += weights[at];
      observation[i] = sum;
    }
    for (int i = 0; i < n; ++i) {
      float pooled = observation[i];
      for (int j = i - 1; j >= 0 && c.positions[i] - c.positions[j] <= halfKernel_; --j) pooled = std::max(pooled, observation[j]);
      for (int j = i + 1; j < n && c.positions[j] - c.positions[i] <= halfKernel_; ++j) pooled = std::max(pooled, observation[j]);
      score[i] = pooled;
      protect[i] = c.positions[i] > view.position - window_;
    }
  }
  std::string budgetRule() const override { return "least pooled attention from the observation window"; }

 private:
  int window_ = 8, halfKernel_ = 2;
  std::map<std::pair<int, int>, std::deque<std::vector<float>>> observed_;  // per (layer, KV head)
  std::vector<float> observation_;  // one head's window sums, reused from call to call
  std::vector<std::pair<const float*, int>> windowRows_;  // likewise
};

}  // namespace attnlab
