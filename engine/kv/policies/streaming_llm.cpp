#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

const SettingSpec kSinks{"sinks", 4, 0, 1e6, true, "s: the first s positions always stay (attention sinks)"};

// StreamingLLM: the first s "sink" positions plus the most recent B - s.
class StreamingLlmPolicy : public EvictionPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kSinks}; }
  std::string configure(const Settings& s, const ModelConfig&) override {
    sinks_ = static_cast<int>(settingOr(s, kSinks));
    return {};
  }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    for (int i = 0; i < view.cache.size(); ++i) {
      const int p = view.cache.positions[i];
      protect[i] = p < sinks_;
      // Newest first, but among the sinks oldest first: a budget below s keeps the first B tokens.
      score[i] = static_cast<float>(protect[i] ? -p : p);
    }
  }
  std::string budgetRule() const override { return "neither a sink nor among the most recent B - s"; }
  KeptAs protectedAs() const override { return KeptAs::sink; }

 private:
  int sinks_ = 4;
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "streaming_llm", "keep the first s sink positions plus the most recent B - s",
                 [] { return std::make_unique<StreamingLlmPolicy>(); });

}  // namespace
}  // namespace attnlab
