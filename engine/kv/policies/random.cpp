#include <cstdint>

#include "kv/eviction_policy.h"

namespace attnlab {
namespace {

const SettingSpec kSeed{"seed", 0, 0, 1e15, true, "seed of the draws"};

// splitmix64: a fixed pseudo-random value per (seed, layer, head, position).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Random eviction, the baseline. Each entry draws one priority when it arrives (a function of seed, layer,
// head and position), so the kept set is a uniformly random subset that never reshuffles.
class RandomPolicy : public EvictionPolicy {
 public:
  std::vector<SettingSpec> settingSpecs() const override { return {kSeed}; }
  std::string configure(const Settings& s, const ModelConfig&) override {
    seed_ = static_cast<uint64_t>(settingOr(s, kSeed));
    return {};
  }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>&) override {
    for (int i = 0; i < view.cache.size(); ++i) {
      const uint64_t key = mix(mix(mix(seed_) ^ static_cast<uint64_t>(view.layer)) ^ static_cast<uint64_t>(view.kvHead) << 20 ^
                               static_cast<uint64_t>(view.cache.positions[i]));
      score[i] = static_cast<float>(key >> 40) / static_cast<float>(1 << 24);
    }
  }
  std::string budgetRule() const override { return "random draw"; }

 private:
  uint64_t seed_ = 0;
};

ATTNLAB_REGISTER(EvictionPolicyRegistry, "random", "keep a random subset of B entries (baseline)", [] { return std::make_unique<RandomPolicy>(); });

}  // namespace
}  // namespace attnlab
