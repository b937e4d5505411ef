#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

// Window: the most recent B entries.
class WindowPolicy : public EvictionPolicy {
 public:
  std::string configure(const Settings&, const ModelConfig&) override { return {}; }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>&) override {
    for (int i = 0; i < view.cache.size(); ++i) score[i] = static_cast<float>(view.cache.positions[i]);
  }
  std::string budgetRule() const override { return "older than the most recent B"; }
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "window", "keep the most recent B entries", [] { return std::make_unique<WindowPolicy>(); });

}  // namespace
}  // namespace attnlab
