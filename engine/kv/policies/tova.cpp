#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

// TOVA: drop the entries the current query attends to least (mean over the KV head's query heads).
class TovaPolicy : public EvictionPolicy {
 public:
  std::string configure(const Settings&, const ModelConfig&) override { return {}; }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>&) override {
    for (int i = 0; i < view.cache.size(); ++i) score[i] = view.cache.latest[i];
  }
  std::string budgetRule() const override { return "lowest attention from the current query"; }
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "tova", "evict the entries with the lowest attention weight from the current query",
                 [] { return std::make_unique<TovaPolicy>(); });

}  // namespace
}  // namespace attnlab
