// Eviction policies and the decoder's statistics over many decoding steps, against a plainly
// written reference. Layer 0 reads only the embeddings, so its full-forward trace gives every
// query's weights over all earlier keys (and every key's retention gate); the weights over a kept
// subset are those renormalised, which is exactly what a softmax over the surviving keys computes.
// The reference replays decoding step by step: it adds the new key, updates the attention received
// so far (summed over the KV head's query heads) and the latest weights (their mean), scores the
// live entries by the policy's rule written out here, and keeps protected entries first, then the
// highest scores, then the most recent, up to the budget (pooled over a layer's heads for AdaKV,
// per layer for PyramidKV). Every step's kept set and every statistic of every live entry must
// match the decoder's, over 28 steps with grouped heads, for every registered policy: one without
// a rule here fails everyRegisteredPolicyHasAReference.
#include <QtTest>

#include "model_support.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "kv/decoder.h"
#include "kv/eviction_policy.h"

using namespace attnlab;

namespace {

// 28 distinct tokens: a repeated token's keys would have one norm under rotation, and the
// float and double rankings of such a tie may differ.
const std::vector<int> kTokens = {17, 4, 22, 8, 0, 13, 3, 25, 7, 26, 2, 11, 14, 24, 6, 10, 12, 27, 5, 15, 1, 23, 18, 16, 20, 9, 19, 21};
constexpr int kLayer = 0;

struct Entry {
  int position;
  double accumulated = 0, latest = 0;
};

// What the reference knows of one KV head: its live entries (with the statistics it computes
// itself from the full-forward weights) and the policy's own memory.
struct ReferenceHead {
  std::vector<Entry> live;
  std::deque<std::map<int, double>> observed;  // SnapKV family: latest weights of every query so far, by position
  int retrieval = -1;                          // DuoAttention: -1 until classified, then 0 (streaming) or 1 (retrieval)
  std::map<int, double> received;              // DuoAttention until classified: attention received, by position
};

// What a rule sees of one KV head at step t.
struct Step {
  int t = 0, layer = 0, kvHead = 0, budget = 0;
  bool budgeted = true;
  const Mat* keys = nullptr;  // the KV head's keys after rotation, by position
  std::vector<double> gate;   // retention gate by position: the largest over the KV head's query heads
};

// score and protection of every live entry (entries in position order); an unprotected entry
// scored -inf leaves whatever the budget.
using Rank = std::function<void(ReferenceHead&, const Step&, std::vector<double>& score, std::vector<char>& protect)>;

struct Rule {
  std::string policy;
  Settings settings;
  std::string budget;  // "" decodes without a budget
  Rank rank;
  bool pooled = false;                                   // a layer's KV heads compete by score for their budgets' sum
  std::function<int(int uniform, int layer)> layerBudget;  // the per-head budget of each layer; none: the uniform one
  int layers = 2;
  bool gated = false;  // the model has the retention gate
};

constexpr double kInf = std::numeric_limits<double>::infinity();

// SnapKV's score: the attention the last w queries gave each key, max-pooled over the live keys
// within half a kernel; the window's own keys are protected.
void snapScores(const ReferenceHead& h, int t, int window, int kernel, std::vector<double>& score, std::vector<char>& protect) {
  const int half = kernel / 2;
  std::vector<double> observation(h.live.size(), 0.0);
  const size_t first = h.observed.size() > static_cast<size_t>(window) ? h.observed.size() - window : 0;
  for (size_t q = first; q < h.observed.size(); ++q)
    for (size_t i = 0; i < h.live.size(); ++i)
      if (auto it = h.observed[q].find(h.live[i].position); it != h.observed[q].end()) observation[i] += it->second;
  for (size_t i = 0; i < h.live.size(); ++i) {
    score[i] = observation[i];
    for (size_t j = 0; j < h.live.size(); ++j)
      if (std::abs(h.live[j].position - h.live[i].position) <= half) score[i] = std::max(score[i], observation[j]);
    protect[i] = h.live[i].position > t - window;
  }
}

// PyramidKV's per-head budget of `layer`: real budgets falling linearly with depth from
// 2B - B/beta (layer 0) to B/beta (the last layer), each layer getting the difference of the
// rounded running sums, so that they add up to L x B.
int pyramidBudget(int uniform, int layer, int layers, double beta) {
  const double least = uniform / beta, most = 2.0 * uniform - least;
  double before = 0, through = 0;
  for (int l = 0; l <= layer; ++l) {
    const double real = most + (least - most) * l / (layers - 1);
    if (l < layer) before += real;
    through += real;
  }
  return static_cast<int>(std::max(1L, std::lround(through) - std::lround(before)));
}

// splitmix64 (Steele, Lea and Flood 2014), the random policy's hash.
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The random policy's priority, as its definition states it: one draw per (seed, layer, KV head,
// position), its top 24 bits as a number in [0, 1).
double randomPriority(uint64_t seed, int layer, int kvHead, int position) {
  const uint64_t draw = splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(layer)) ^
                                   (static_cast<uint64_t>(kvHead) << 20) ^ static_cast<uint64_t>(position));
  return static_cast<double>(draw >> 40) / (1 << 24);
}

std::vector<Rule> rules() {
  std::vector<Rule> r;
  auto byPosition = [](ReferenceHead& h, const Step&, std::vector<double>& score, std::vector<char>&) {
    for (size_t i = 0; i < h.live.size(); ++i) score[i] = h.live[i].position;
  };
  r.push_back({"full", {}, "", [](ReferenceHead&, const Step&, auto&, auto&) {}});  // keeps everything
  r.push_back({"window", {}, "6", byPosition});
  r.push_back({"window", {}, "25%", byPosition});  // compression at a ratio: ceil(0.25 seen) entries
  for (double sinks : {2.0, 4.0})
    r.push_back({"streaming_llm", {{"sinks", sinks}}, "7", [sinks](ReferenceHead& h, const Step&, auto& score, auto& protect) {
                   for (size_t i = 0; i < h.live.size(); ++i) {
                     score[i] = h.live[i].position;
                     protect[i] = h.live[i].position < sinks;
                   }
                 }});
  for (double ratio : {0.5, 0.34})
    r.push_back({"h2o", {{"recent_ratio", ratio}}, "6", [ratio](ReferenceHead& h, const Step& s, auto& score, auto& protect) {
                   const int recent = static_cast<int>(std::floor(ratio * s.budget));
                   for (size_t i = 0; i < h.live.size(); ++i) {
                     score[i] = h.live[i].accumulated;
                     protect[i] = h.live[i].position > s.t - recent;
                   }
                 }});
  r.push_back({"tova", {}, "5", [](ReferenceHead& h, const Step&, auto& score, auto&) {
                 for (size_t i = 0; i < h.live.size(); ++i) score[i] = h.live[i].latest;
               }});
  // (init-captures: clang 14, which the sanitizer builds use, cannot capture structured bindings)
  for (auto [window, kernel] : {std::pair{8.0, 5.0}, std::pair{3.0, 3.0}})
    r.push_back({"snapkv", {{"window", window}, {"kernel", kernel}}, "7", [window = window, kernel = kernel](ReferenceHead& h, const Step& s, auto& score, auto& protect) {
                   snapScores(h, s.t, static_cast<int>(window), static_cast<int>(kernel), score, protect);
                 }});
  r.push_back({"k_norm", {}, "6", [](ReferenceHead& h, const Step& s, auto& score, auto&) {
                 for (size_t i = 0; i < h.live.size(); ++i) score[i] = -s.keys->row(h.live[i].position).cast<double>().norm();
               }});
  r.push_back({"keydiff", {}, "6", [](ReferenceHead& h, const Step& s, auto& score, auto&) {
                 Eigen::RowVectorXd mean = Eigen::RowVectorXd::Zero(s.keys->cols());
                 for (const Entry& e : h.live) mean += s.keys->row(e.position).cast<double>();
                 mean /= static_cast<double>(h.live.size());
                 for (size_t i = 0; i < h.live.size(); ++i) {
                   const Eigen::RowVectorXd k = s.keys->row(h.live[i].position).cast<double>();
                   score[i] = -k.dot(mean) / (k.norm() * mean.norm());
                 }
               }});
  // PyramidKV on four layers: B = 6, beta = 3 gives the per-head budgets 10, 7, 5, 2 (running
  // sums 10, 17.3, 22, 24 rounded); layer 0's entries are ranked as SnapKV ranks them.
  for (auto [window, kernel] : {std::pair{3.0, 3.0}, std::pair{5.0, 1.0}}) {
    Rule p{"pyramidkv", {{"window", window}, {"kernel", kernel}, {"beta", 3.0}}, "6", [window = window, kernel = kernel](ReferenceHead& h, const Step& s, auto& score, auto& protect) {
             snapScores(h, s.t, static_cast<int>(window), static_cast<int>(kernel), score, protect);
           }};
    p.layerBudget = [](int uniform, int layer) { return pyramidBudget(uniform, layer, 4, 3.0); };
    p.layers = 4;
    r.push_back(p);
  }
  // AdaKV: SnapKV's scores, each head's floor(alpha B) best raised above every other score, then
  // the layer's heads compete for B x heads entries.
  for (auto [window, safeguard] : {std::pair{2.0, 0.34}, std::pair{1.0, 0.67}, std::pair{4.0, 0.0}}) {
    Rule a{"adakv", {{"window", window}, {"kernel", 3.0}, {"safeguard", safeguard}}, "6", [window = window, safeguard = safeguard](ReferenceHead& h, const Step& s, auto& score, auto& protect) {
             snapScores(h, s.t, static_cast<int>(window), 3, score, protect);
             std::vector<int> order(h.live.size());
             std::iota(order.begin(), order.end(), 0);
             std::sort(order.begin(), order.end(), [&](int a, int b) { return score[a] != score[b] ? score[a] > score[b] : a > b; });
             const int floorCount = std::min(static_cast<int>(order.size()), static_cast<int>(std::floor(safeguard * s.budget)));
             for (int k = 0; k < floorCount; ++k) score[order[k]] = kInf;
           }};
    a.pooled = true;
    r.push_back(a);
  }
  // DuoAttention: a KV head is classified once, at the first step past s + r positions, as a
  // retrieval head when at least `threshold` of the attention its positions received so far (evicted
  // ones too) went to positions that are neither sinks nor recent. Until then it keeps its entries
  // as a streaming head. Retrieval heads keep everything (or the B with most attention); streaming
  // heads keep the sinks and the r most recent (at most B: sinks first). B = 4 < s + r evicts
  // before the classification.
  for (const auto& [threshold, budget] :
       {std::pair{0.14, std::string()}, std::pair{0.14, std::string("8")}, std::pair{0.14, std::string("4")}, std::pair{1.0, std::string()}})
    r.push_back({"duo_attention", {{"sinks", 2.0}, {"recent", 4.0}, {"threshold", threshold}}, budget,
                 [threshold = threshold](ReferenceHead& h, const Step& s, auto& score, auto& protect) {
                   auto streamed = [&](int position) { return position < 2 || position > s.t - 4; };
                   if (h.retrieval < 0) {
                     for (const Entry& e : h.live) h.received[e.position] = e.accumulated;
                     if (s.t >= 2 + 4) {
                       double outside = 0, total = 0;
                       for (const auto& [position, received] : h.received) {
                         total += received;
                         if (!streamed(position)) outside += received;
                       }
                       h.retrieval = outside >= threshold * total;
                     }
                   }
                   for (size_t i = 0; i < h.live.size(); ++i) {
                     if (h.retrieval == 1) {
                       score[i] = h.live[i].accumulated;
                       continue;
                     }
                     protect[i] = h.live[i].position < 2;
                     score[i] = streamed(h.live[i].position) ? h.live[i].position : -kInf;
                   }
                 }});
  // learned_gate: without a budget entries whose gate is below the threshold leave; with one the
  // top B by gate stay; the last keep_recent positions always stay.
  for (const auto& [threshold, keepRecent, budget] :
       {std::tuple{0.95, 0.0, std::string()}, std::tuple{0.96, 3.0, std::string()}, std::tuple{0.5, 2.0, std::string("6")}}) {
    Rule g{"learned_gate", {{"threshold", threshold}, {"keep_recent", keepRecent}}, budget,
           [threshold = threshold, keepRecent = keepRecent](ReferenceHead& h, const Step& s, auto& score, auto& protect) {
             for (size_t i = 0; i < h.live.size(); ++i) {
               const double gate = s.gate[h.live[i].position];
               score[i] = s.budgeted || gate >= static_cast<float>(threshold) ? gate : -kInf;
               protect[i] = h.live[i].position > s.t - keepRecent;
             }
           }};
    g.gated = true;
    r.push_back(g);
  }
  for (const auto& [seed, budget] : {std::pair{0.0, std::string("6")}, std::pair{7.0, std::string("25%")}})
    r.push_back({"random", {{"seed", seed}}, budget, [seed = seed](ReferenceHead& h, const Step& s, auto& score, auto&) {
                   for (size_t i = 0; i < h.live.size(); ++i)
                     score[i] = randomPriority(static_cast<uint64_t>(seed), s.layer, s.kvHead, h.live[i].position);
                 }});
  return r;
}

// The budget at step t (seen = t + 1 entries so far), as "6" or "25%" means it.
int budgetAt(const std::string& text, int t) {
  if (text.back() == '%') return std::max(1, static_cast<int>(std::ceil(std::stod(text) / 100 * (t + 1) - 1e-9)));
  return std::stoi(text);
}

// Which entries of a layer's heads stay: protected first, then those that may stay, then the
// highest score, then the most recent, then the lower head, up to each head's budget (or, pooled,
// the sum of the heads' budgets); an unprotected entry scored -inf never stays.
std::vector<std::vector<char>> keptOf(const std::vector<ReferenceHead>& heads, const std::vector<std::vector<double>>& score,
                                      const std::vector<std::vector<char>>& protect, const std::vector<int>& budgets, bool pooled) {
  struct Candidate {
    int head, index;
  };
  auto dropped = [&](Candidate c) { return !protect[c.head][c.index] && score[c.head][c.index] == -kInf; };
  auto before = [&](Candidate a, Candidate b) {
    if (protect[a.head][a.index] != protect[b.head][b.index]) return protect[a.head][a.index] > protect[b.head][b.index];
    if (dropped(a) != dropped(b)) return dropped(b);
    if (score[a.head][a.index] != score[b.head][b.index]) return score[a.head][a.index] > score[b.head][b.index];
    const int pa = heads[a.head].live[a.index].position, pb = heads[b.head].live[b.index].position;
    if (pa != pb) return pa > pb;
    return a.head < b.head;
  };
  std::vector<std::vector<char>> keep(heads.size());
  auto keepBest = [&](std::vector<Candidate> pool, long long count) {
    std::sort(pool.begin(), pool.end(), before);
    for (long long k = 0; k < count && k < static_cast<long long>(pool.size()); ++k)
      if (!dropped(pool[k])) keep[pool[k].head][pool[k].index] = 1;
  };
  std::vector<Candidate> all;
  long long total = 0;
  for (size_t h = 0; h < heads.size(); ++h) {
    keep[h].assign(heads[h].live.size(), 0);
    std::vector<Candidate> own;
    for (size_t i = 0; i < heads[h].live.size(); ++i) own.push_back({static_cast<int>(h), static_cast<int>(i)});
    if (pooled) {
      all.insert(all.end(), own.begin(), own.end());
      total += budgets[h];
    } else
      keepBest(own, budgets[h]);
  }
  if (pooled) keepBest(all, total);
  return keep;
}

}  // namespace

class TestKvPolicyReference : public QObject {
  Q_OBJECT

 private slots:
  // A new policy must come with its reference here: a registered name without a rule fails.
  void everyRegisteredPolicyHasAReference() {
    const auto all = rules();
    for (const auto& entry : EvictionPolicyRegistry::instance().entries())
      QVERIFY2(std::any_of(all.begin(), all.end(), [&](const Rule& r) { return r.policy == entry.name; }),
               qPrintable(QString("eviction policy '%1' has no plainly written reference in rules()").arg(QString::fromStdString(entry.name))));
  }

  void everyStepMatchesThePlainReference_data() {
    QTest::addColumn<int>("rule");
    const auto all = rules();
    for (size_t i = 0; i < all.size(); ++i) {
      QString name = QString::fromStdString(all[i].policy + " " + (all[i].budget.empty() ? "no budget" : all[i].budget));
      for (const auto& [k, v] : all[i].settings) name += QString(" %1=%2").arg(QString::fromStdString(k)).arg(v);
      QTest::newRow(qPrintable(name)) << static_cast<int>(i);
    }
  }
  void everyStepMatchesThePlainReference() {
    QFETCH(int, rule);
    const Rule r = rules()[rule];
    ModelConfig c = testing::smallConfig("softmax", "rope", 28, 32);
    c.n_kv_heads = 2;  // two query heads per KV head: statistics sum and average over the group
    c.n_layers = r.layers;
    c.retention_gate = r.gated;
    const auto model = testing::randomisedModel(c, 0.6f);
    const Trace trace = testing::traceOf(*model, kTokens);
    const int group = c.n_heads / c.kvHeads(), T = static_cast<int>(kTokens.size());

    Budget budget;
    if (!r.budget.empty()) QVERIFY(parseBudget(r.budget, "head", budget).empty());
    Decoder decoder(*model, makeEvictionPolicy(r.policy, r.settings, c), r.policy, budget);
    std::vector<ReferenceHead> ref(c.kvHeads());
    int evictingSteps = 0;
    std::vector<int> sizesSeen;  // pooled heads: the largest difference between two heads' sizes
    for (int t = 0; t < T; ++t) {
      decoder.step(kTokens[t]);
      const int uniform = r.budget.empty() ? std::numeric_limits<int>::max() / 2 : budgetAt(r.budget, t);
      const int B = r.layerBudget && !r.budget.empty() ? r.layerBudget(uniform, kLayer) : uniform;
      std::vector<std::vector<double>> score(c.kvHeads());
      std::vector<std::vector<char>> protect(c.kvHeads());
      std::vector<Step> steps(c.kvHeads());
      for (int kvh = 0; kvh < c.kvHeads(); ++kvh) {
        ReferenceHead& h = ref[kvh];
        h.live.push_back({t});
        // this query's weights over the live keys: the full row renormalised over them
        std::map<int, double> latest;
        for (int g = 0; g < group; ++g) {
          const Mat& A = trace.layers[kLayer].heads[kvh * group + g].weights;
          double mass = 0;
          for (const Entry& e : h.live) mass += A(t, e.position);
          for (const Entry& e : h.live) latest[e.position] += A(t, e.position) / mass;
        }
        for (Entry& e : h.live) {
          e.accumulated += latest[e.position];
          e.latest = latest[e.position] / group;
        }
        std::map<int, double> meanLatest;
        for (const Entry& e : h.live) meanLatest[e.position] = e.latest;
        h.observed.push_back(meanLatest);

        Step& s = steps[kvh];
        s.t = t;
        s.layer = kLayer;
        s.kvHead = kvh;
        s.budget = B;
        s.budgeted = !r.budget.empty();
        s.keys = &trace.layers[kLayer].heads[kvh * group].k;  // the KV head's keys after rotation
        if (r.gated) {
          s.gate.assign(T, 0.0);
          for (int g = 0; g < group; ++g) {
            const auto& gate = trace.layers[kLayer].heads[kvh * group + g].gate;
            QCOMPARE(static_cast<int>(gate.size()), T);
            for (int p = 0; p < T; ++p) s.gate[p] = std::max(s.gate[p], static_cast<double>(gate[p]));
          }
        }
        score[kvh].assign(h.live.size(), 0.0);
        protect[kvh].assign(h.live.size(), 0);
        r.rank(h, s, score[kvh], protect[kvh]);
      }
      const auto keep = keptOf(ref, score, protect, std::vector<int>(c.kvHeads(), B), r.pooled);
      bool evicted = false;
      for (int kvh = 0; kvh < c.kvHeads(); ++kvh) {
        ReferenceHead& h = ref[kvh];
        std::vector<Entry> kept;
        for (size_t i = 0; i < h.live.size(); ++i)
          if (keep[kvh][i]) kept.push_back(h.live[i]);
        evicted = evicted || kept.size() < h.live.size();
        h.live = std::move(kept);
        compareHead(decoder.cache().head(kLayer, kvh), h, steps[kvh], t, kvh);
        if (QTest::currentTestFailed()) return;
      }
      if (r.pooled) sizesSeen.push_back(std::abs(static_cast<int>(ref[0].live.size()) - static_cast<int>(ref[1].live.size())));
      // budget allocation: the other layers decode from evicted caches, so only their sizes follow
      // from the budgets
      for (int l = 1; l < c.n_layers && (r.layerBudget || r.pooled); ++l) {
        const int layerBudget = r.layerBudget ? r.layerBudget(uniform, l) : uniform;
        int held = 0;
        for (int kvh = 0; kvh < c.kvHeads(); ++kvh) {
          held += decoder.cache().head(l, kvh).size();
          if (!r.pooled && decoder.cache().head(l, kvh).size() != std::min(t + 1, layerBudget))
            QFAIL(qPrintable(QString("step %1, layer %2, KV head %3: %4 entries, the layer's budget %5")
                                 .arg(t).arg(l).arg(kvh).arg(decoder.cache().head(l, kvh).size()).arg(layerBudget)));
        }
        if (held != c.kvHeads() * std::min(t + 1, layerBudget))  // pooled heads share the layer's entries
          QFAIL(qPrintable(QString("step %1, layer %2: %3 entries in all, budget %4 per head").arg(t).arg(l).arg(held).arg(layerBudget)));
      }
      evictingSteps += evicted;
    }
    if (r.policy != "full") QVERIFY2(evictingSteps >= 15, qPrintable(QString("only %1 steps evict: too few to test the rule").arg(evictingSteps)));
    if (r.pooled) QVERIFY2(*std::max_element(sizesSeen.begin(), sizesSeen.end()) >= 2, "the pooled heads never kept different numbers of entries");
    if (r.policy == "duo_attention" && r.settings.at("threshold") < 1)
      QVERIFY2(ref[0].retrieval != ref[1].retrieval, "the two KV heads must be classified differently to test both kinds");
  }

  void pyramidBudgetsAreTheHandComputedOnes() {
    // B = 6, beta = 3 on four layers: 10, 7.33, 4.67, 2; running sums 10, 17.33, 22, 24 rounded
    const std::vector<int> expected = {10, 7, 5, 2};
    for (int l = 0; l < 4; ++l) QCOMPARE(pyramidBudget(6, l, 4, 3.0), expected[l]);
  }

 private:
  static void compareHead(const HeadCache& hc, const ReferenceHead& h, const Step& s, int t, int kvh) {
    std::vector<int> expected;
    for (const Entry& e : h.live) expected.push_back(e.position);
    if (hc.positions != expected)
      QFAIL(qPrintable(QString("step %1, KV head %2: the decoder keeps %3 positions, the reference %4 (first difference at %5)")
                           .arg(t).arg(kvh).arg(hc.positions.size()).arg(expected.size())
                           .arg(std::mismatch(hc.positions.begin(), hc.positions.end(), expected.begin(), expected.end()).first -
                                hc.positions.begin())));
    for (int i = 0; i < hc.size(); ++i) {
      const Entry& e = h.live[i];
      if (std::abs(hc.accumulated[i] - e.accumulated) > 1e-5 * std::max(1.0, e.accumulated) || std::abs(hc.latest[i] - e.latest) > 1e-6)
        QFAIL(qPrintable(QString("step %1, KV head %2, position %3: accumulated %4 vs %5, latest %6 vs %7")
                             .arg(t).arg(kvh).arg(e.position).arg(hc.accumulated[i]).arg(e.accumulated).arg(hc.latest[i]).arg(e.latest)));
      if (!s.gate.empty() && std::abs(hc.gate(i) - s.gate[e.position]) > 1e-6)
        QFAIL(qPrintable(QString("step %1, KV head %2, position %3: gate %4 vs %5").arg(t).arg(kvh).arg(e.position).arg(hc.gate(i)).arg(s.gate[e.position])));
    }
  }
};

QTEST_APPLESS_MAIN(TestKvPolicyReference)
#include "test_kv_policy_reference.moc"
