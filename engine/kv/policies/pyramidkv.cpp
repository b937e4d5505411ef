#include <algorithm>
#include <cmath>

#include "kv/policies/snapkv_scores.h"

namespace attnlab {
namespace {

const SettingSpec kBeta{"beta", 20, 1, 1000, false, "the top layer keeps B / beta per head; the layers' budgets still average B"};

// PyramidKV (Cai et al. 2024, as kvpress's PyramidKVPress): per-layer pyramidal budgets. Lower
// layers attend broadly and keep more, upper layers attend narrowly and keep less: the per-head
// budget falls linearly from 2B - B/beta in layer 0 to B/beta in the last layer, its average over
// the layers B (the per-layer budgets are the differences of the rounded running sums, so they add
// up to exactly L x B). Entries are ranked by SnapKV's scores within each head.
class PyramidKvPolicy : public SnapKvPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override {
    auto specs = SnapKvPolicy::settingSpecs();
    specs.push_back(kBeta);
    return specs;
  }
  std::string configure(const Settings& s, const ModelConfig& model) override {
    beta_ = settingOr(s, kBeta);
    return SnapKvPolicy::configure(s, model);
  }

  int layerBudget(int uniform, int layer, int layers) const override {
    if (layers <= 1) return uniform;
    const double least = uniform / beta_, most = 2.0 * uniform - least;
    // sum of the real budgets of layers 0..l-1: an arithmetic series from `most` down by `step`
    const double step = (most - least) / (layers - 1);
    auto runningSum = [&](int l) { return l * most - step * l * (l - 1) / 2.0; };
    const long long budget = std::llround(runningSum(layer + 1)) - std::llround(runningSum(layer));
    return static_cast<int>(std::max(1LL, budget));
  }
  std::string budgetRule() const override { return "least pooled attention from the observation window (pyramidal layer budget)"; }

 private:
  double beta_ = 20;
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "pyramidkv",
                 "SnapKV scores; per-head budget falling linearly with depth from 2B - B/beta to B/beta (mean B)",
                 [] { return std::make_unique<PyramidKvPolicy>(); });

}  // namespace
}  // namespace attnlab
