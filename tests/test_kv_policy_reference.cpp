// Eviction policies and the decoder's statistics over many decoding steps, against a plainly
// written reference. Layer 0 reads only the embeddings, so its full-forward trace gives every
// query's weights over all earlier keys; the weights over a kept subset are those renormalised,
// which is exactly what a softmax over the surviving keys computes. The reference replays
// decoding step by step: it adds the new key, updates the attention received so far (summed over
// the KV head's query heads) and the latest weights (their mean), keeps the SnapKV observation
// window, ranks the live entries by the policy's rule written out here (protected first, then the
// score, then the most recent) and keeps the budget. Every step's kept set and every statistic of
// every live entry must match the decoder's, over 28 steps with grouped heads.
#include <QtTest>

#include "model_support.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <numeric>

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

// What the reference knows of one KV head at step t: the live entries, the full-forward weights
// of each of its query heads, its keys, and the policy's own memory (SnapKV's window).
struct ReferenceHead {
  std::vector<Entry> live;
  std::deque<std::map<int, double>> observed;  // SnapKV: latest weights of the last w queries, by position
};

struct Rule {
  std::string policy;
  Settings settings;
  std::string budget;
  // score and protection of live entry i at step t (entries in position order)
  std::function<void(const ReferenceHead&, int t, int budget, const Mat& keys, std::vector<double>& score, std::vector<char>& protect)>
      rank;
};

double get(const Settings& s, const std::string& key) { return s.at(key); }

std::vector<Rule> rules() {
  std::vector<Rule> r;
  auto byPosition = [](const ReferenceHead& h, int, int, const Mat&, std::vector<double>& score, std::vector<char>&) {
    for (size_t i = 0; i < h.live.size(); ++i) score[i] = h.live[i].position;
  };
  r.push_back({"window", {}, "6", byPosition});
  r.push_back({"window", {}, "25%", byPosition});  // compression at a ratio: ceil(0.25 seen) entries
  for (double sinks : {2.0, 4.0})
    r.push_back({"streaming_llm", {{"sinks", sinks}}, "7", [sinks](const ReferenceHead& h, int, int, const Mat&, auto& score, auto& protect) {
                   for (size_t i = 0; i < h.live.size(); ++i) {
                     score[i] = h.live[i].position;
                     protect[i] = h.live[i].position < sinks;
                   }
                 }});
  for (double ratio : {0.5, 0.34})
    r.push_back({"h2o", {{"recent_ratio", ratio}}, "6", [ratio](const ReferenceHead& h, int t, int budget, const Mat&, auto& score, auto& protect) {
                   const int recent = static_cast<int>(std::floor(ratio * budget));
                   for (size_t i = 0; i < h.live.size(); ++i) {
                     score[i] = h.live[i].accumulated;
                     protect[i] = h.live[i].position > t - recent;
                   }
                 }});
  r.push_back({"tova", {}, "5", [](const ReferenceHead& h, int, int, const Mat&, auto& score, auto&) {
                 for (size_t i = 0; i < h.live.size(); ++i) score[i] = h.live[i].latest;
               }});
  for (auto [window, kernel] : {std::pair{8.0, 5.0}, std::pair{3.0, 3.0}})
    r.push_back({"snapkv", {{"window", window}, {"kernel", kernel}}, "7",
                 [window, kernel](const ReferenceHead& h, int t, int, const Mat&, auto& score, auto& protect) {
                   const int half = static_cast<int>(kernel) / 2;
                   std::vector<double> observation(h.live.size(), 0.0);
                   for (size_t i = 0; i < h.live.size(); ++i)
                     for (const auto& weights : h.observed)
                       if (auto it = weights.find(h.live[i].position); it != weights.end()) observation[i] += it->second;
                   for (size_t i = 0; i < h.live.size(); ++i) {
                     score[i] = observation[i];  // max-pooled over live keys within half a kernel
                     for (size_t j = 0; j < h.live.size(); ++j)
                       if (std::abs(h.live[j].position - h.live[i].position) <= half) score[i] = std::max(score[i], observation[j]);
                     protect[i] = h.live[i].position > t - window;
                   }
                 }});
  r.push_back({"k_norm", {}, "6", [](const ReferenceHead& h, int, int, const Mat& keys, auto& score, auto&) {
                 for (size_t i = 0; i < h.live.size(); ++i) score[i] = -keys.row(h.live[i].position).cast<double>().norm();
               }});
  r.push_back({"keydiff", {}, "6", [](const ReferenceHead& h, int, int, const Mat& keys, auto& score, auto&) {
                 Eigen::RowVectorXd mean = Eigen::RowVectorXd::Zero(keys.cols());
                 for (const Entry& e : h.live) mean += keys.row(e.position).cast<double>();
                 mean /= static_cast<double>(h.live.size());
                 for (size_t i = 0; i < h.live.size(); ++i) {
                   const Eigen::RowVectorXd k = keys.row(h.live[i].position).cast<double>();
                   score[i] = -k.dot(mean) / (k.norm() * mean.norm());
                 }
               }});
  return r;
}

// The budget at step t (seen = t + 1 entries so far), as "6" or "25%" means it.
int budgetAt(const std::string& text, int t) {
  if (text.back() == '%') return std::max(1, static_cast<int>(std::ceil(std::stod(text) / 100 * (t + 1) - 1e-9)));
  return std::stoi(text);
}

}  // namespace

class TestKvPolicyReference : public QObject {
  Q_OBJECT

 private slots:
  void everyStepMatchesThePlainReference_data() {
    QTest::addColumn<int>("rule");
    const auto all = rules();
    for (size_t i = 0; i < all.size(); ++i) {
      QString name = QString::fromStdString(all[i].policy + " " + all[i].budget);
      for (const auto& [k, v] : all[i].settings) name += QString(" %1=%2").arg(QString::fromStdString(k)).arg(v);
      QTest::newRow(qPrintable(name)) << static_cast<int>(i);
    }
  }
  void everyStepMatchesThePlainReference() {
    QFETCH(int, rule);
    const Rule r = rules()[rule];
    ModelConfig c = testing::smallConfig("softmax", "rope", 28, 32);
    c.n_kv_heads = 2;  // two query heads per KV head: statistics sum and average over the group
    const auto model = testing::randomisedModel(c, 0.6f);
    const Trace trace = testing::traceOf(*model, kTokens);
    const int group = c.n_heads / c.kvHeads(), T = static_cast<int>(kTokens.size());

    Budget budget;
    QVERIFY(parseBudget(r.budget, "head", budget).empty());
    Decoder decoder(*model, makeEvictionPolicy(r.policy, r.settings, c), r.policy, budget);
    std::vector<ReferenceHead> ref(c.kvHeads());
    int evictions = 0;
    for (int t = 0; t < T; ++t) {
      decoder.step(kTokens[t]);
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
        if (r.policy == "snapkv" && static_cast<int>(h.observed.size()) > static_cast<int>(r.settings.at("window"))) h.observed.pop_front();

        const int B = budgetAt(r.budget, t);
        if (static_cast<int>(h.live.size()) > B) {
          const Mat& keys = trace.layers[kLayer].heads[kvh * group].k;  // the KV head's keys after rotation
          std::vector<double> score(h.live.size(), 0.0);
          std::vector<char> protect(h.live.size(), 0);
          r.rank(h, t, B, keys, score, protect);
          std::vector<int> order(h.live.size());
          std::iota(order.begin(), order.end(), 0);
          std::sort(order.begin(), order.end(), [&](int a, int b) {
            if (protect[a] != protect[b]) return protect[a] > protect[b];
            if (score[a] != score[b]) return score[a] > score[b];
            return h.live[a].position > h.live[b].position;
          });
          std::vector<char> keep(h.live.size(), 0);
          for (int i = 0; i < B; ++i) keep[order[i]] = 1;
          std::vector<Entry> kept;
          for (size_t i = 0; i < h.live.size(); ++i)
            if (keep[i]) kept.push_back(h.live[i]);
          h.live = std::move(kept);
          ++evictions;
        }

        const HeadCache& hc = decoder.cache().head(kLayer, kvh);
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
        }
      }
    }
    QVERIFY2(evictions >= 15 * c.kvHeads(), "the run must evict on most steps to test the rule");
  }
};

QTEST_APPLESS_MAIN(TestKvPolicyReference)
#include "test_kv_policy_reference.moc"
