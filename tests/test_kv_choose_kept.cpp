// chooseKept (kv/eviction_policy.h) selects its kept entries without sorting them all; this checks
// it against the rule written out plainly: rank every candidate (protected, may stay, score with
// NaN lowest, most recent, lower head), stable-sort, keep the budget's first. Random caches with
// many ties, -inf and NaN scores, protected entries, per-head, pooled and exact budgets.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/random.h"
#include "kv/eviction_policy.h"

using namespace attnlab;

namespace {

// Scores and protections fixed in advance, per KV head.
class ScriptedPolicy : public EvictionPolicy {
 public:
  std::vector<std::vector<float>> scores;
  std::vector<std::vector<char>> protects;
  std::string configure(const Settings&, const ModelConfig&) override { return {}; }
  void score(const HeadView& view, std::vector<float>& score, std::vector<char>& protect) override {
    score = scores[view.kvHead];
    protect = protects[view.kvHead];
  }
  std::string budgetRule() const override { return "scripted"; }
};

// The rule, plainly: one stable sort of all candidates of a pool.
std::vector<KeepDecision> plainChooseKept(const ScriptedPolicy& p, const std::vector<HeadView>& views, bool pooled, bool exact) {
  struct Candidate {
    int head, index, position;
    float score;
    char protect, dropped;
  };
  std::vector<KeepDecision> out(views.size());
  std::vector<std::vector<Candidate>> pools(views.size());
  for (size_t h = 0; h < views.size(); ++h) {
    const int n = views[h].cache.size();
    out[h].keep.assign(n, 0);
    out[h].dropped.assign(n, 0);
    for (int i = 0; i < n; ++i) {
      const float s = p.scores[h][i];
      const char dropped = std::isinf(s) && s < 0 && !p.protects[h][i];
      out[h].dropped[i] = dropped;
      const float ranked = std::isnan(s) ? -std::numeric_limits<float>::infinity() : s;
      pools[pooled && !exact ? 0 : h].push_back({int(h), i, views[h].cache.positions[i], ranked, p.protects[h][i], dropped});
    }
  }
  auto before = [](const Candidate& a, const Candidate& b) {
    if (a.protect != b.protect) return a.protect > b.protect;
    if (a.dropped != b.dropped) return b.dropped > a.dropped;
    if (a.score != b.score) return a.score > b.score;
    return a.position > b.position;  // equal positions: the stable sort keeps the lower head first
  };
  long long pooledBudget = 0;
  for (const HeadView& v : views) pooledBudget += v.budget;
  for (size_t h = 0; h < pools.size(); ++h) {
    std::stable_sort(pools[h].begin(), pools[h].end(), before);
    const long long budget = pooled && !exact ? pooledBudget : views[h].budget;
    for (long long r = 0; r < static_cast<long long>(pools[h].size()) && r < budget; ++r)
      if (!pools[h][r].dropped || exact) out[pools[h][r].head].keep[pools[h][r].index] = 1;
  }
  return out;
}

}  // namespace

class TestKvChooseKept : public QObject {
  Q_OBJECT

 private slots:
  void equalsTheRuleSortedPlainly() {
    Rng rng(2026);
    int compared = 0, evicting = 0;
    for (int trial = 0; trial < 400; ++trial) {
      const int heads = 1 + static_cast<int>(rng.uniform() * 4);
      std::vector<HeadCache> caches(heads);
      ScriptedPolicy policy;
      policy.scores.resize(heads);
      policy.protects.resize(heads);
      for (int h = 0; h < heads; ++h) {
        const int n = static_cast<int>(rng.uniform() * 40);
        caches[h].dHead = 1;
        for (int i = 0; i < n; ++i) {
          const float zero = 0.0f;
          caches[h].append(&zero, &zero, i * 2 + (h % 2), nullptr, nullptr);  // positions shared between some heads
          const double u = rng.uniform();
          policy.scores[h].push_back(u < 0.1   ? -std::numeric_limits<float>::infinity()
                                     : u < 0.15 ? std::numeric_limits<float>::quiet_NaN()
                                                : static_cast<float>(static_cast<int>(rng.uniform() * 5)));  // many ties
          policy.protects[h].push_back(rng.uniform() < 0.1);
        }
      }
      std::vector<HeadView> views;
      for (int h = 0; h < heads; ++h) {  // every fourth trial drops exactly one entry per head, as a decoding step does
        const int budget = trial % 4 == 0 ? std::max(0, caches[h].size() - 1) : static_cast<int>(rng.uniform() * 45);
        views.push_back(HeadView{caches[h], 0, h, 100, budget, true});
      }
      for (const bool pooled : {false, true})
        for (const bool exact : {false, true}) {
          const auto fast = chooseKept(policy, views, pooled, exact);
          const auto plain = plainChooseKept(policy, views, pooled, exact);
          for (int h = 0; h < heads; ++h) {
            QCOMPARE(fast[h].keep, plain[h].keep);
            QCOMPARE(fast[h].dropped, plain[h].dropped);
            evicting += std::count(plain[h].keep.begin(), plain[h].keep.end(), 0) > 0;
          }
          ++compared;
        }
    }
    QCOMPARE(compared, 1600);
    QVERIFY(evicting > 500);  // most cases really choose
  }
};

QTEST_APPLESS_MAIN(TestKvChooseKept)
#include "test_kv_choose_kept.moc"
