// duo_attention (DuoAttention with an attention-share proxy for its retrieval score): a head whose
// attention went to its sinks and recent window streams (keeps exactly those), a head that looked
// elsewhere keeps everything; the choice is made once per sequence; the threshold's ends give the
// full cache and StreamingLLM; a budget trims retrieval heads only; a budget below s + r still
// classifies every head, and its streaming heads hold what StreamingLLM holds at that budget.
#include <QtTest>

#include <set>

#include "kv/decoder.h"
#include "kv/eviction_policy.h"
#include "model_support.h"

using namespace attnlab;

namespace {

// Entries at `positions` (0, 1, ... when empty) that received `received` attention.
HeadCache withAccumulated(const std::vector<float>& received, std::vector<int> positions = {}) {
  if (positions.empty())
    for (int i = 0; i < static_cast<int>(received.size()); ++i) positions.push_back(i);
  HeadCache c;
  c.dHead = 2;
  for (const int p : positions) {
    const float k[2] = {1.0f, 0.0f}, v[2] = {0.0f, 0.0f};
    c.append(k, v, p, nullptr, nullptr);
  }
  c.accumulated = received;
  return c;
}

std::set<int> kept(const HeadCache& c, const KeepDecision& d) {
  std::set<int> out;
  for (int i = 0; i < c.size(); ++i)
    if (d.keep[i]) out.insert(c.positions[i]);
  return out;
}

ModelConfig model() {
  ModelConfig c = testing::smallConfig("softmax", "rope", 9, 32);
  c.n_kv_heads = 2;
  return c;
}

// Why a step broke the budget contract (no head above a count budget B, bytes = live entries x an
// entry's size), or "".
QString brokenContract(const Decoder& decoder, const Budget& b, int t) {
  for (const HeadOccupancy& h : decoder.record().heads) {
    if (b.kind == Budget::Kind::count && static_cast<int>(h.live.size()) > b.entriesFor(t + 1))
      return QString("step %1: a head holds %2 entries over budget %3").arg(t).arg(h.live.size()).arg(b.value);
    if (h.bytes != h.live.size() * decoder.cache().bytesPerEntry(h.layer))
      return QString("step %1: %2 bytes for %3 entries").arg(t).arg(h.bytes).arg(h.live.size());
  }
  return {};
}

std::vector<std::set<int>> liveAfter(const Model& m, const std::string& policy, const Settings& settings, const std::string& budget = "",
                                     QString* broken = nullptr) {
  Budget b;
  if (!budget.empty()) parseBudget(budget, "head", b);
  Decoder decoder(m, makeEvictionPolicy(policy, settings, m.config()), policy, b);
  for (int t = 0; t < 24; ++t) {
    decoder.step((t * 7 + 3) % 9);
    if (broken && broken->isEmpty()) *broken = brokenContract(decoder, b, t);
  }
  std::vector<std::set<int>> out;
  for (const HeadOccupancy& h : decoder.record().heads) out.emplace_back(h.live.begin(), h.live.end());
  return out;
}

}  // namespace

class TestKvDuoAttention : public QObject {
  Q_OBJECT

 private slots:
  void streamingAndRetrievalHeads() {
    auto policy = makeEvictionPolicy("duo_attention", {{"sinks", 2}, {"recent", 3}, {"threshold", 0.2}}, model());
    QVERIFY(!policy->needsBudget());
    const int n = 12;
    std::vector<float> local(n, 0.01f), spread(n, 1.0f);
    local[0] = local[1] = local[10] = local[11] = 2.0f;  // 0.08 of 8.08 outside: below 0.2
    const HeadCache streaming = withAccumulated(local), retrieval = withAccumulated(spread);
    const std::vector<HeadView> views = {HeadView{streaming, 0, 0, n - 1, 1 << 30, false},
                                         HeadView{retrieval, 0, 1, n - 1, 1 << 30, false}};
    const auto d = chooseKept(*policy, views, false, false);
    QCOMPARE(kept(streaming, d[0]), (std::set<int>{0, 1, 9, 10, 11}));
    QCOMPARE(static_cast<int>(kept(retrieval, d[1]).size()), n);
    // the choice stays: the retrieval head's attention now concentrates, it still keeps everything
    HeadCache later = withAccumulated(local);
    const std::vector<HeadView> again = {HeadView{later, 0, 1, n - 1, 1 << 30, false}};
    QCOMPARE(static_cast<int>(kept(later, chooseKept(*policy, again, false, false)[0]).size()), n);
    // a new sequence classifies anew
    policy->reset();
    QCOMPARE(kept(later, chooseKept(*policy, again, false, false)[0]), (std::set<int>{0, 1, 9, 10, 11}));
  }

  // Threshold 0: every head retrieves (the full cache); threshold 1 on a model whose heads give some
  // attention to sinks or recent keys: every head streams, as StreamingLLM at budget s + r.
  void thresholdEnds() {
    const auto m = testing::randomisedModel(model());
    const auto all = liveAfter(*m, "duo_attention", {{"sinks", 2}, {"recent", 4}, {"threshold", 0}});
    for (const auto& live : all) QCOMPARE(static_cast<int>(live.size()), 24);
    const auto streaming = liveAfter(*m, "duo_attention", {{"sinks", 2}, {"recent", 4}, {"threshold", 1}});
    const auto reference = liveAfter(*m, "streaming_llm", {{"sinks", 2}}, "6");
    QCOMPARE(streaming, reference);
    // in between, each head holds either everything or exactly its sinks and recent window
    for (const auto& live : liveAfter(*m, "duo_attention", {{"sinks", 2}, {"recent", 4}, {"threshold", 0.5}}))
      QVERIFY(live.size() == 24 || live == (std::set<int>{0, 1, 20, 21, 22, 23}));
    // a budget trims the retrieval heads to B
    for (const auto& live : liveAfter(*m, "duo_attention", {{"sinks", 2}, {"recent", 4}, {"threshold", 0}}, "10"))
      QCOMPARE(static_cast<int>(live.size()), 10);
  }

  // B = 4 below s + r = 6: the heads are still classified (at the first step past s + r positions),
  // and streaming heads hold the sinks first, then the most recent: StreamingLLM's entries at B.
  void budgetBelowSinksAndRecent() {
    const auto m = testing::randomisedModel(model());
    QString broken;
    const auto streaming = liveAfter(*m, "duo_attention", {{"sinks", 2}, {"recent", 4}, {"threshold", 1}}, "4", &broken);
    QVERIFY2(broken.isEmpty(), qPrintable(broken));
    QCOMPARE(streaming, liveAfter(*m, "streaming_llm", {{"sinks", 2}}, "4"));
    for (const auto& live : streaming) QCOMPARE(live, (std::set<int>{0, 1, 22, 23}));
    for (const auto& live : liveAfter(*m, "duo_attention", {{"sinks", 2}, {"recent", 4}, {"threshold", 0.5}}, "4", &broken))
      QCOMPARE(static_cast<int>(live.size()), 4);
    QVERIFY2(broken.isEmpty(), qPrintable(broken));
  }

  // A budget below the sinks keeps the first B tokens, the ones a sink is about (before, the sort
  // among the protected sinks kept the latest of them).
  void aBudgetBelowTheSinksKeepsTheFirstTokens() {
    const auto m = testing::randomisedModel(model());
    QString broken;
    for (const auto& live : liveAfter(*m, "streaming_llm", {{"sinks", 4}}, "2", &broken)) QCOMPARE(live, (std::set<int>{0, 1}));
    for (const auto& live : liveAfter(*m, "duo_attention", {{"sinks", 4}, {"recent", 4}, {"threshold", 1}}, "2", &broken))
      QCOMPARE(live, (std::set<int>{0, 1}));
    QVERIFY2(broken.isEmpty(), qPrintable(broken));
  }

  // The classification counts the attention of entries the budget evicted before it: position 2,
  // the one neither a sink nor recent at position 5 (s = 2, r = 3), left at step 4 under B = 3.
  void evictedEntriesCountInTheClassification() {
    auto policy = makeEvictionPolicy("duo_attention", {{"sinks", 2}, {"recent", 3}, {"threshold", 0.2}}, model());
    const HeadCache looked = withAccumulated({0.1f, 0.1f, 5.0f, 0.1f, 0.1f}), local = withAccumulated({0.1f, 0.1f, 0.1f, 0.1f, 0.1f});
    const auto before = chooseKept(*policy, {HeadView{looked, 0, 0, 4, 3, true}, HeadView{local, 0, 1, 4, 3, true}}, false, false);
    // until classified every position is a sink or recent: both heads keep the sinks and the newest
    QCOMPARE(kept(looked, before[0]), (std::set<int>{0, 1, 4}));
    QCOMPARE(kept(local, before[1]), (std::set<int>{0, 1, 4}));
    const std::vector<int> live = {0, 1, 4, 5};
    const HeadCache retrieval = withAccumulated({0.2f, 0.1f, 3.0f, 2.0f}, live), streaming = withAccumulated({0.2f, 0.1f, 3.0f, 2.0f}, live);
    const auto after = chooseKept(*policy, {HeadView{retrieval, 0, 0, 5, 3, true}, HeadView{streaming, 0, 1, 5, 3, true}}, false, false);
    QCOMPARE(kept(retrieval, after[0]), (std::set<int>{0, 4, 5}));  // the most attention received
    QCOMPARE(kept(streaming, after[1]), (std::set<int>{0, 1, 5}));  // its sinks, then the most recent
  }
};

QTEST_MAIN(TestKvDuoAttention)
#include "test_kv_duo_attention.moc"
