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
// first step past s + r positions, by the share of the attention its queries gave so far (summed
// over past queries and the group's heads) to positions that are neither sinks nor recent: a
// retrieval head when that share is at least the threshold. The choice then stays for the
// sequence. Until then every position seen is a sink or recent, so the head keeps them as a
// streaming head would. The classification is made on positions, not on the cache's size, so that
// a budget B below s + r still classifies: entries the budget evicted count with the attention
// they had received. With a budget, retrieval heads keep the B entries with most attention
// received and streaming heads min(B, s + r): their sinks first, then the most recent.
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
  void reset() override {
    retrieval_.clear();
    received_.clear();
  }

  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    const HeadCache& c = view.cache;
    const bool retrieval = isRetrieval(view);
    for (int i = 0; i < c.size(); ++i) {
      if (retrieval) {
        score[i] = c.accumulated[i];
        continue;
      }
      protect[i] = c.positions[i] < sinks_;
      // As streaming_llm: the most recent first, the sinks oldest first (a budget below s keeps the first B).
      score[i] = protect[i] ? static_cast<float>(-c.positions[i])
                 : streamed(c.positions[i], view.position) ? static_cast<float>(c.positions[i])
                                                           : -std::numeric_limits<float>::infinity();
    }
  }
  std::string budgetRule() const override { return "retrieval head over budget: least attention received"; }
  std::string dropRule() const override { return "streaming head: neither a sink nor among the recent positions"; }
  KeptAs protectedAs() const override { return KeptAs::sink; }

 private:
  using HeadKey = std::pair<int, int>;  // (layer, KV head)

  bool streamed(int position, int now) const { return position < sinks_ || position > now - recent_; }

  // The head's class, decided at its first step past s + r positions (false until then).
  bool isRetrieval(const HeadView& view) {
    const HeadKey key{view.layer, view.kvHead};
    if (const auto found = retrieval_.find(key); found != retrieval_.end()) return found->second;
    std::vector<float>& received = received_[key];
    for (int i = 0; i < view.cache.size(); ++i) {
      const int p = view.cache.positions[i];
      if (p >= static_cast<int>(received.size())) received.resize(p + 1, 0.0f);
      received[p] = view.cache.accumulated[i];
    }
    if (view.position < sinks_ + recent_) return false;
    double outside = 0, total = 0;
    for (int p = 0; p < static_cast<int>(received.size()); ++p) {
      total += received[p];
      if (!streamed(p, view.position)) outside += received[p];
    }
    received_.erase(key);
    return retrieval_[key] = total > 0 && outside >= threshold_ * total;
  }

  int sinks_ = 4, recent_ = 8;
  double threshold_ = 0.1;
  std::map<HeadKey, bool> retrieval_;
  // Until a head is classified: the attention each position seen has received, by position, kept
  // for entries the budget has evicted too.
  std::map<HeadKey, std::vector<float>> received_;
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "duo_attention",
                 "retrieval heads keep everything, streaming heads the first s sinks and r most recent (retrieval: attention share outside those >= threshold)",
                 [] { return std::make_unique<DuoAttentionPolicy>(); });

}  // namespace
}  // namespace attnlab
