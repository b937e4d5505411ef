// Budget allocation across layers and heads (kvpress's PyramidKV and AdaKV): the per-layer budgets
// of PyramidKV follow the pyramid and add up to the uniform total; AdaKV moves entries from a head
// with concentrated attention to one with spread-out attention, keeps the layer's total and each
// head's floor; both hold exactly those counts while decoding a model.
#include <QtTest>

#include <numeric>

#include "kv/decoder.h"
#include "kv/eviction_policy.h"
#include "model_support.h"

using namespace attnlab;

namespace {

// A head holding positions 0..n-1 whose latest attention is `weights`.
HeadCache withAttention(const std::vector<float>& weights) {
  HeadCache c;
  c.dHead = 2;
  for (int i = 0; i < static_cast<int>(weights.size()); ++i) {
    const float k[2] = {1.0f, 0.0f}, v[2] = {0.0f, 0.0f};
    c.append(k, v, i, nullptr, nullptr);
  }
  c.latest = weights;
  c.accumulated = weights;
  return c;
}

int keptCount(const KeepDecision& d) { return static_cast<int>(std::count(d.keep.begin(), d.keep.end(), 1)); }

ModelConfig model(int layers) {
  ModelConfig c = testing::smallConfig("softmax", "rope", 9, 32);
  c.n_layers = layers;
  c.n_kv_heads = 2;
  return c;
}

}  // namespace

class TestKvBudgetAllocation : public QObject {
  Q_OBJECT

 private slots:
  void pyramidBudgetsFallWithDepthAndKeepTheTotal_data() {
    QTest::addColumn<int>("uniform");
    QTest::addColumn<int>("layers");
    QTest::addColumn<double>("beta");
    QTest::newRow("32 x 4, beta 20") << 32 << 4 << 20.0;
    QTest::newRow("10 x 6, beta 4") << 10 << 6 << 4.0;
    QTest::newRow("7 x 3, beta 2") << 7 << 3 << 2.0;
  }
  void pyramidBudgetsFallWithDepthAndKeepTheTotal() {
    QFETCH(int, uniform);
    QFETCH(int, layers);
    QFETCH(double, beta);
    const auto policy = makeEvictionPolicy("pyramidkv", {{"beta", beta}}, model(layers));
    int total = 0, previous = 1 << 30;
    for (int l = 0; l < layers; ++l) {
      const int b = policy->layerBudget(uniform, l, layers);
      QVERIFY2(b <= previous, qPrintable(QString("layer %1 keeps %2 after %3").arg(l).arg(b).arg(previous)));
      previous = b;
      total += b;
    }
    QCOMPARE(total, uniform * layers);
    // the ends of the pyramid: 2B - B/beta and B/beta, rounded
    QVERIFY(std::abs(policy->layerBudget(uniform, 0, layers) - (2 * uniform - uniform / beta)) <= 1.0);
    QVERIFY(std::abs(policy->layerBudget(uniform, layers - 1, layers) - uniform / beta) <= 1.0);
    QCOMPARE(policy->layerBudget(uniform, 0, 1), uniform);  // one layer: nothing to shift
  }

  // Head 0 attends to two keys, head 1 evenly to all: pooled by score, head 1 keeps more than its
  // uniform share and head 0 fewer, the layer keeps 2 x B, each head at least floor(alpha B).
  void adaKvGivesEntriesToTheSpreadOutHead() {
    const auto policy = makeEvictionPolicy("adakv", {{"window", 1}, {"kernel", 1}, {"safeguard", 0.5}}, model(1));
    QVERIFY(policy->poolsHeads());
    const int n = 12, B = 4;
    std::vector<float> sharp(n, 0.001f), flat(n, 1.0f / n);
    sharp[3] = 0.6f, sharp[7] = 0.39f;
    const HeadCache h0 = withAttention(sharp), h1 = withAttention(flat);
    const std::vector<HeadView> views = {HeadView{h0, 0, 0, n - 1, B, true}, HeadView{h1, 0, 1, n - 1, B, true}};
    const auto d = chooseKept(*policy, views, policy->poolsHeads(), false);
    const int k0 = keptCount(d[0]), k1 = keptCount(d[1]);
    QCOMPARE(k0 + k1, 2 * B);
    QVERIFY2(k1 > B && k0 < B, qPrintable(QString("kept %1 and %2").arg(k0).arg(k1)));
    QVERIFY(k0 >= B / 2);  // the safeguard floor
    QVERIFY(d[0].keep[3] && d[0].keep[7]);  // the sharp head's two keys stay
    // safeguard 1: every head keeps exactly its uniform share, pooling changes nothing
    const auto even = makeEvictionPolicy("adakv", {{"window", 1}, {"kernel", 1}, {"safeguard", 1}}, model(1));
    const auto e = chooseKept(*even, views, true, false);
    QCOMPARE(keptCount(e[0]), B);
    QCOMPARE(keptCount(e[1]), B);
  }

  // Decoding a model: each layer holds the pyramid's share per head (PyramidKV) or its total split
  // by score (AdaKV), and the record's bytes are the live entries' bytes.
  void decodingHoldsTheAllocatedCounts_data() {
    QTest::addColumn<QString>("policy");
    QTest::newRow("pyramidkv") << "pyramidkv";
    QTest::newRow("adakv") << "adakv";
  }
  void decodingHoldsTheAllocatedCounts() {
    QFETCH(QString, policy);
    const int layers = 3, B = 6;
    const auto m = testing::randomisedModel(model(layers));
    Budget budget;
    QCOMPARE(parseBudget(std::to_string(B), "head", budget), std::string());
    const Settings settings = {{"window", 2}, {policy == "pyramidkv" ? "beta" : "safeguard", policy == "pyramidkv" ? 3.0 : 0.25}};
    auto p = makeEvictionPolicy(policy.toStdString(), settings, m->config());
    const auto* raw = p.get();
    Decoder decoder(*m, std::move(p), policy.toStdString(), budget);
    for (int t = 0; t < 20; ++t) decoder.step((t * 5 + 1) % 9);
    std::vector<int> perLayer(layers, 0);
    size_t live = 0;
    bool uneven = false;
    for (const HeadOccupancy& h : decoder.record().heads) {
      perLayer[h.layer] += static_cast<int>(h.live.size());
      live += h.live.size();
      if (policy == "pyramidkv") QCOMPARE(static_cast<int>(h.live.size()), raw->layerBudget(B, h.layer, layers));
      else {
        QVERIFY(static_cast<int>(h.live.size()) >= B / 4);
        uneven = uneven || static_cast<int>(h.live.size()) != B;
      }
    }
    for (int l = 0; l < layers; ++l)
      if (policy == "adakv") QCOMPARE(perLayer[l], 2 * B);
    QCOMPARE(std::accumulate(perLayer.begin(), perLayer.end(), 0), layers * 2 * B);
    QCOMPARE(decoder.record().bytes, live * decoder.cache().bytesPerEntry());
    if (policy == "adakv") QVERIFY2(uneven, "every head kept exactly B: nothing was adapted");
  }
};

QTEST_MAIN(TestKvBudgetAllocation)
#include "test_kv_budget_allocation.moc"
