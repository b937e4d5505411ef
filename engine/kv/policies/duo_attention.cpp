#include <limits>
#include <map>

#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

const SettingSpec kSinks{"sinks", 4, 0, 1e6, true, "s: the first s positions a streaming head keeps (attention sinks)"};
const SettingSpec kRecent{"recent", 8, 1, 1e6, true, "r: the most recent positions a streaming head keeps"};
const SettingSpec kThreshold{"threshold", 0.1, 0, 1, false,
                             "a KV head is a retrieval head when this share of the attention it received went outside its sinks and recent window"};

// DuoAttention (Xiao et al. 2024), with a stated proxy for its retrieval score: retrieval heads keep
// their whole cache, streaming heads only the first s sinks and the r most recent positions. The
// paper learns each head's gate offline on passkey data; here a KV head is classified once, at the
// first step its cache holds more than s + r entries, by the share of the attention its queries
// gave so far (summed over past queries and the group's heads) to entries that are neither sinks
// nor recent: a retrieval head when that share is at least the threshold. The choice then stays
// for the sequence. With a budget, retrieval heads keep the B entries with most attention received.
class DuoAttentionPolicy : public EvictionPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kSinks, kRecent, kThreshold}; }
  std::string configure(const Settings& s, const ModelConfig&) override {
    sinks_ = static_cast<int>(settingOr(s, kSinks));
    recent_ = static_cast<int>(settingOr(s, kRecent));
    threshold_ = settingOr(s, kThreshold);
    return {};
  }
  bool needsBudget() const override { return false; }
  void reset() override { retrieval_.clear(); }

  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    const HeadCache& c = view.cache;
    const int n = c.size();
    auto streamed = [&](int i) { return c.positions[i] < sinks_ || c.positions[i] > view.position - recent_; };
    const auto key = std::make_pair(view.layer, view.kvHead);
    auto found = retrieval_.find(key);
    if (found == retrieval_.end() && n > sinks_ + recent_) {  // classify once, from the attention so far
      double outside = 0, total = 0;
      for (int i = 0; i < n; ++i) {
        total += c.accumulated[i];
        if (!streamed(i)) outside += c.accumulated[i];
      }
      found = retrieval_.emplace(key, total > 0 && outside >= threshold_ * total).first;
    }
    const bool retrieval = found == retrieval_.end() || found->second;  // unclassified: everything fits anyway
    for (int i = 0; i < n; ++i) {
      if (retrieval) {
        score[i] = c.accumulated[i];
        continue;
      }
      protect[i] = c.positions[i] < sinks_;
      score[i] = streamed(i) ? static_cast<float>(c.positions[i]) : -std::numeric_limits<float>::infinity();
    }
  }
  std::string budgetRule() const override { return "retrieval head over budget: least attention received"; }
  std::string dropRule() const override { return "streaming head: neither a sink nor among the recent positions"; }
  KeptAs protectedAs() const override { return KeptAs::sink; }

 private:
  int sinks_ = 4, recent_ = 8;
  double threshold_ = 0.1;
  std::map<std::pair<int, int>, bool> retrieval_;  // per (layer, KV head) once classified
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "duo_attention",
                 "retrieval heads keep everything, streaming heads the first s sinks and r most recent (retrieval: attention share outside those >= threshold)",
                 [] { return std::make_unique<DuoAttentionPolicy>(); });

}  // namespace
}  // namespace attnlab
