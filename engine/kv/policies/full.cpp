#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

// The dense reference: every entry stays.
class FullPolicy : public EvictionPolicy {
 public:
  std::string configure(const Settings&, const ModelConfig&) override { return {}; }
  bool needsBudget() const override { return false; }
  void score(const HeadView&, std::vector<float>&, std::vector<char>&) override {}
  std::string budgetRule() const override { return "never evicts"; }
  bool isDenseReference() const override { return true; }
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "full", "keep every entry (the dense reference)", [] { return std::make_unique<FullPolicy>(); });

}  // namespace
}  // namespace attnlab
