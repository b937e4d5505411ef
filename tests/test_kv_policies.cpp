// Each eviction policy keeps exactly the entries its rule names on a hand-made cache; budgets and
// policy names are checked with clear errors.
#include <QtTest>

#include <set>

#include "kv/decoder.h"
#include "kv/eviction_policy.h"

using namespace attnlab;

namespace {

// A head holding positions 0..n-1 with the given statistics (keys of width 2).
HeadCache handMade(int n, int group = 1) {
  HeadCache c;
  c.dHead = 2;
  c.group = group;
  for (int i = 0; i < n; ++i) {
    const float k[2] = {1.0f, 0.0f}, v[2] = {0.0f, 0.0f};
    c.append(k, v, i, nullptr, nullptr);
  }
  return c;
}

// Replaces the head's keys (rows of width 2) with `flat`.
void setKeys(HeadCache& c, const std::vector<float>& flat) {
  c.keys = RowStore(KvQuant::fp32, c.dHead);
  for (size_t r = 0; r * c.dHead < flat.size(); ++r) c.keys.append(flat.data() + r * c.dHead);
}

ModelConfig gatedConfig() {
  ModelConfig c;
  c.vocab = 9;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 4;
  c.d_ff = 32;
  c.context = 16;
  c.retention_gate = true;
  return c;
}

std::set<int> keptPositions(const HeadCache& c, const KeepDecision& d) {
  std::set<int> out;
  for (int i = 0; i < c.size(); ++i)
    if (d.keep[i]) out.insert(c.positions[i]);
  return out;
}

// Runs `policy` on one head at query position n - 1 with budget B (-1: none).
std::set<int> keep(const std::string& policy, const HeadCache& c, int budget, const Settings& settings = {},
                   KeepDecision* decision = nullptr) {
  auto p = makeEvictionPolicy(policy, settings, gatedConfig());
  const bool budgeted = budget >= 0;
  const std::vector<HeadView> views = {HeadView{c, 0, 0, c.size() - 1, budgeted ? budget : 1 << 30, budgeted}};
  const auto d = chooseKept(*p, views, false, false);
  if (decision) *decision = d[0];
  return keptPositions(c, d[0]);
}

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

}  // namespace

class TestKvPolicies : public QObject {
  Q_OBJECT

 private slots:
  void theShippedPoliciesAreRegistered() {
    for (const char* name : {"full", "window", "streaming_llm", "h2o", "tova", "snapkv", "keydiff", "k_norm", "random", "learned_gate",
                             "pyramidkv", "adakv", "duo_attention"})
      QVERIFY2(EvictionPolicyRegistry::instance().find(name), name);
  }

  // Exactly one dense reference, and it keeps everything: callers find it by asking, not by name.
  void theDenseReferenceDescribesItself() {
    QStringList dense;
    for (const auto& e : EvictionPolicyRegistry::instance().entries())
      if (isDenseReferencePolicy(e.name)) dense << QString::fromStdString(e.name);
    QCOMPARE(dense, QStringList{"full"});
    QVERIFY(!isDenseReferencePolicy("no_such_policy"));
  }

  void full() { QCOMPARE(keep("full", handMade(6), -1), (std::set<int>{0, 1, 2, 3, 4, 5})); }

  void window() { QCOMPARE(keep("window", handMade(6), 3), (std::set<int>{3, 4, 5})); }

  void streamingLlm() { QCOMPARE(keep("streaming_llm", handMade(6), 4, {{"sinks", 2}}), (std::set<int>{0, 1, 4, 5})); }

  // recent floor(0.5 * 4) = 2 positions (4, 5), then the two largest accumulated attentions
  void h2o() {
    HeadCache c = handMade(6);
    c.accumulated = {5.0f, 0.1f, 3.0f, 0.2f, 0.0f, 0.0f};
    QCOMPARE(keep("h2o", c, 4), (std::set<int>{0, 2, 4, 5}));
    QCOMPARE(keep("h2o", c, 4, {{"recent_ratio", 0}}), (std::set<int>{0, 2, 3, 1}));
  }

  // the current query's weights; a tie (positions 0 and 4) goes to the more recent entry
  void tova() {
    HeadCache c = handMade(6);
    c.latest = {0.1f, 0.5f, 0.05f, 0.2f, 0.1f, 0.05f};
    QCOMPARE(keep("tova", c, 3), (std::set<int>{1, 3, 4}));
  }

  // observation window of 2 keeps 4 and 5; pooling over +-1 position lifts 1 next to 0
  void snapkv() {
    HeadCache c = handMade(6);
    c.latest = {0.3f, 0.0f, 0.0f, 0.1f, 0.0f, 0.0f};
    QCOMPARE(keep("snapkv", c, 4, {{"window", 2}, {"kernel", 3}}), (std::set<int>{0, 1, 4, 5}));
    QCOMPARE(keep("snapkv", c, 4, {{"window", 2}, {"kernel", 1}}), (std::set<int>{0, 3, 4, 5}));
  }

  // mean key (0.75, 0.25): (0, 1) is least like it; the three equal keys tie, the latest wins
  void keydiff() {
    HeadCache c = handMade(4);
    setKeys(c, {1, 0, 1, 0, 1, 0, 0, 1});
    QCOMPARE(keep("keydiff", c, 2), (std::set<int>{2, 3}));
  }

  void kNorm() {
    HeadCache c = handMade(4);
    setKeys(c, {3, 0, 0, 1, 2, 0, 0.5f, 0});
    QCOMPARE(keep("k_norm", c, 2), (std::set<int>{1, 3}));
  }

  void randomIsAFixedSubsetOfTheBudget() {
    const HeadCache c = handMade(12);
    const auto a = keep("random", c, 5), b = keep("random", c, 5);
    QCOMPARE(static_cast<int>(a.size()), 5);
    QCOMPARE(a, b);
    bool differs = false;
    for (int seed = 1; seed < 5; ++seed) differs = differs || keep("random", c, 5, {{"seed", double(seed)}}) != a;
    QVERIFY(differs);
  }

  // threshold: g < 0.5 goes whatever the budget; keep_recent protects; a budget keeps the top B by g;
  // under grouped heads the entry's gate is the largest of its group
  void learnedGate() {
    HeadCache c = handMade(6);
    c.retention = {0.9f, 0.2f, 0.6f, 0.4f, 0.7f, 0.1f};
    KeepDecision d;
    QCOMPARE(keep("learned_gate", c, -1, {}, &d), (std::set<int>{0, 2, 4}));
    QCOMPARE(d.dropped, (std::vector<char>{0, 1, 0, 1, 0, 1}));
    QCOMPARE(keep("learned_gate", c, -1, {{"keep_recent", 2}}), (std::set<int>{0, 2, 4, 5}));
    QCOMPARE(keep("learned_gate", c, -1, {{"threshold", 0}}), (std::set<int>{0, 1, 2, 3, 4, 5}));
    QCOMPARE(keep("learned_gate", c, 2), (std::set<int>{0, 4}));
    HeadCache grouped = handMade(3, 2);
    grouped.retention = {0.1f, 0.8f, 0.3f, 0.2f, 0.6f, 0.0f};  // [n, group]
    QCOMPARE(keep("learned_gate", grouped, -1), (std::set<int>{0, 2}));
  }

  // per layer: heads compete for 2 x 2 entries, so the head with the smaller key norms keeps more
  void perLayerBudgetPoolsHeads() {
    HeadCache a = handMade(4), b = handMade(4);
    setKeys(a, {0.1f, 0, 0.2f, 0, 0.3f, 0, 5, 0});
    setKeys(b, {4, 0, 3, 0, 2, 0, 1, 0});
    auto policy = makeEvictionPolicy("k_norm", {}, gatedConfig());
    const std::vector<HeadView> views = {HeadView{a, 0, 0, 3, 2, true}, HeadView{b, 0, 1, 3, 2, true}};
    const auto pooled = chooseKept(*policy, views, true, false);
    QCOMPARE(keptPositions(a, pooled[0]), (std::set<int>{0, 1, 2}));
    QCOMPARE(keptPositions(b, pooled[1]), (std::set<int>{3}));
    const auto perHead = chooseKept(*policy, views, false, false);
    QCOMPARE(keptPositions(a, perHead[0]), (std::set<int>{0, 1}));
    QCOMPARE(keptPositions(b, perHead[1]), (std::set<int>{2, 3}));
  }

  // the matched protocol: exactly the given count, even where the rule would drop entries
  void exactCountsOverrideTheRule() {
    HeadCache c = handMade(6);
    c.retention = {0.9f, 0.2f, 0.6f, 0.4f, 0.7f, 0.1f};
    auto policy = makeEvictionPolicy("learned_gate", {}, gatedConfig());
    const auto d = chooseKept(*policy, {HeadView{c, 0, 0, 5, 4, true}}, false, true);
    QCOMPARE(keptPositions(c, d[0]), (std::set<int>{0, 2, 3, 4}));
  }

  void budgetsParse() {
    Budget b;
    QCOMPARE(QString::fromStdString(parseBudget("32", "head", b)), QString());
    QCOMPARE(b.entriesFor(100), 32);
    QCOMPARE(QString::fromStdString(parseBudget("25%", "layer", b)), QString());
    QVERIFY(b.perLayer);
    QCOMPARE(b.entriesFor(10), 3);  // ceil(2.5)
    QCOMPARE(b.entriesFor(1), 1);
    QCOMPARE(QString::fromStdString(b.describe()), QString("25% per layer"));
  }

  void badBudgetsSayWhy_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("scope");
    QTest::addColumn<QString>("expected");
    QTest::newRow("zero") << "0" << "head" << "whole number of entries >= 1";
    QTest::newRow("negative") << "-4" << "head" << "whole number of entries >= 1";
    QTest::newRow("fraction") << "1.5" << "head" << "whole number of entries >= 1";
    QTest::newRow("word") << "lots" << "head" << "is not a count";
    QTest::newRow("empty") << "" << "head" << "is not a count";
    QTest::newRow("ratio over 100") << "150%" << "head" << "must be in (0%, 100%]";
    QTest::newRow("zero ratio") << "0%" << "head" << "must be in (0%, 100%]";
    QTest::newRow("scope") << "8" << "row" << "scope 'row' is not available";
  }
  void badBudgetsSayWhy() {
    QFETCH(QString, text);
    QFETCH(QString, scope);
    QFETCH(QString, expected);
    Budget b;
    const QString why = QString::fromStdString(parseBudget(text.toStdString(), scope.toStdString(), b));
    QVERIFY2(why.contains(expected), qPrintable(why));
    QVERIFY(!why.contains('\n'));
  }

  void badPoliciesSayWhy() {
    const ModelConfig gated = gatedConfig();
    ModelConfig plain = gated;
    plain.retention_gate = false;
    QVERIFY(errorOf([&] { makeEvictionPolicy("lru", {}, gated); }).contains("unknown eviction policy 'lru' (known: adakv, duo_attention, full, h2o"));
    QVERIFY(errorOf([&] { makeEvictionPolicy("h2o", {{"recent_ratio", 2}}, gated); }).contains("recent_ratio"));
    QVERIFY(errorOf([&] { makeEvictionPolicy("h2o", {{"sinks", 2}}, gated); }).contains("has no setting 'sinks'"));
    QVERIFY(errorOf([&] { makeEvictionPolicy("learned_gate", {}, plain); }).contains("model.retention_gate"));
    const Model model(plain, 1);
    QVERIFY(errorOf([&] { Decoder(model, makeEvictionPolicy("h2o", {}, plain), "h2o", Budget{}); }).contains("needs a budget"));
    Budget b;
    parseBudget("4", "head", b);
    QVERIFY(errorOf([&] { Decoder(model, makeEvictionPolicy("full", {}, plain), "full", b); }).contains("takes no budget"));
  }
};

QTEST_APPLESS_MAIN(TestKvPolicies)
#include "test_kv_policies.moc"
