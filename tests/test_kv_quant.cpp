// Quantised KV cache and honest bytes: int8 / int4 rows round to within half a step of their
// per-token scale, the cache holds exactly rows x (scale + codes) bytes and reports that, under any
// eviction policy; decoding through a quantised cache stays close to the full forward; and one
// tensor is held exactly where the stored values equal the stored keys.
#include <QtTest>

#include <cmath>

#include "kv/decoder.h"
#include "kv/row_store.h"
#include "kv/kv_bytes.h"
#include "grad_check.h"

using namespace attnlab;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1, 4, 4, 0, 8};

Mat fullLogits(const Model& model) {
  auto ws = makeWorkspace();
  const std::vector<int> targets(kTokens.size(), -1);
  model.forward(*ws, kTokens.data(), targets.data(), 1, static_cast<int>(kTokens.size()));
  return workspaceLogits(*ws);
}

// Decodes kTokens; returns the largest |decoded - full| logit relative to the logits' scale, and
// checks after every step that the record's bytes are the bytes the cache holds for its live rows.
double decodeAndCheckBytes(const Model& model, const std::string& policy, const std::string& budget, KvQuant quant) {
  Budget b;
  if (!budget.empty()) parseBudget(budget, "head", b);
  Decoder decoder(model, makeEvictionPolicy(policy, {}, model.config()), policy, b, false, quant);
  const Mat full = fullLogits(model);
  double worst = 0;
  for (size_t t = 0; t < kTokens.size(); ++t) {
    const Mat& row = decoder.step(kTokens[t]);
    worst = std::max(worst, static_cast<double>((row - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
    size_t expected = 0, held = 0;
    for (const HeadOccupancy& h : decoder.record().heads) {
      expected += h.live.size() * decoder.cache().bytesPerEntry(h.layer);
      held += decoder.cache().head(h.layer, h.kvHead).bytes();
      if (h.bytes != h.live.size() * decoder.cache().bytesPerEntry(h.layer)) return -1;
    }
    if (decoder.record().bytes != expected || held != expected) return -1;
  }
  return worst / std::max(1.0f, full.cwiseAbs().maxCoeff());
}

}  // namespace

class TestKvQuant : public QObject {
  Q_OBJECT

 private slots:
  void rowsRoundWithinHalfAStep_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<int>("limit");
    QTest::newRow("int8") << "int8" << 127;
    QTest::newRow("int4") << "int4" << 7;
  }
  void rowsRoundWithinHalfAStep() {
    QFETCH(QString, format);
    QFETCH(int, limit);
    KvQuant q;
    QVERIFY(parseKvQuant(format.toStdString(), q));
    const int d = 7;  // odd: int4's last byte holds one code
    RowStore store(q, d);
    Rng rng(5);
    std::vector<std::vector<float>> rows;
    for (int r = 0; r < 9; ++r) {
      rows.push_back(testing::randomVector(d, rng, -3, 3));
      if (r == 4) rows.back().assign(d, 0.0f);  // an all-zero row: scale 0, decodes to 0
      store.append(rows.back().data());
    }
    QCOMPARE(store.rows(), 9);
    QCOMPARE(store.bytes(), size_t(9) * (sizeof(float) + (q == KvQuant::int8 ? d : (d + 1) / 2)));
    std::vector<float> scratch;
    const float* decoded = store.read(scratch);
    for (int r = 0; r < 9; ++r) {
      float largest = 0;
      for (float x : rows[r]) largest = std::max(largest, std::abs(x));
      const float step = largest / limit;
      for (int c = 0; c < d; ++c) {
        const float x = decoded[r * d + c];
        QVERIFY(std::abs(x - rows[r][c]) <= 0.5f * step * 1.0001f + 1e-7f);
        if (r == 4) QCOMPARE(x, 0.0f);
      }
    }
    // the row's largest entry is a whole code: it decodes exactly (up to the scale's rounding)
    const std::vector<float> copy(decoded, decoded + 9 * d);
    RowStore again(q, d);  // decoded rows quantise to themselves
    for (int r = 0; r < 9; ++r) again.append(copy.data() + r * d);
    std::vector<float> scratch2;
    const float* twice = again.read(scratch2);
    for (int i = 0; i < 9 * d; ++i) QVERIFY(std::abs(twice[i] - copy[i]) <= 1e-6f * (1 + std::abs(copy[i])));
    // compact keeps the chosen rows, in order, and their bytes only
    std::vector<char> keep(9, 0);
    keep[1] = keep[4] = keep[8] = 1;
    store.compact(keep);
    QCOMPARE(store.rows(), 3);
    QCOMPARE(store.bytes(), 3 * RowStore::rowBytes(q, d));
    const float* kept = store.read(scratch);
    for (int c = 0; c < d; ++c) {
      QCOMPARE(kept[c], copy[1 * d + c]);
      QCOMPARE(kept[d + c], 0.0f);
      QCOMPARE(kept[2 * d + c], copy[8 * d + c]);
    }
    // runs of kept rows (moved as blocks) and single ones keep their order: rows 0-1, 3-5 and 8 of nine
    RowStore runs(q, d);
    for (int r = 0; r < 9; ++r) runs.append(copy.data() + r * d);
    runs.compact({1, 1, 0, 1, 1, 1, 0, 0, 1});
    QCOMPARE(runs.rows(), 6);
    std::vector<float> scratch3;
    const float* moved = runs.read(scratch3);
    const int order[] = {0, 1, 3, 4, 5, 8};
    for (int k = 0; k < 6; ++k)
      for (int c = 0; c < d; ++c) QCOMPARE(moved[k * d + c], twice[order[k] * d + c]);
    KvQuant unknown;
    QVERIFY(!parseKvQuant("int2", unknown));
  }

  // The bytes after every step equal live entries x element size exactly, with and without
  // eviction; int8 decodes close to the full forward, int4 further off, fp32 as before.
  void decodingHoldsExactBytes_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("budget");
    QTest::addColumn<double>("tolerance");
    for (const char* f : {"fp32", "int8", "int4"})
      for (const auto& [policy, budget] : {std::pair{"full", ""}, std::pair{"h2o", "6"}, std::pair{"snapkv", "50%"}}) {
        const double tolerance = std::string(policy) != "full" ? 1e9 : std::string(f) == "fp32" ? 2e-5 : std::string(f) == "int8" ? 2e-2 : 0.3;
        QTest::newRow((std::string(f) + " " + policy + " " + budget).c_str()) << f << policy << budget << tolerance;
      }
  }
  void decodingHoldsExactBytes() {
    QFETCH(QString, format);
    QFETCH(QString, policy);
    QFETCH(QString, budget);
    QFETCH(double, tolerance);
    KvQuant q;
    QVERIFY(parseKvQuant(format.toStdString(), q));
    ModelConfig c = testing::smallConfig("softmax", "rope", 9, 16);
    c.n_kv_heads = 2;
    const auto model = testing::randomisedModel(c);
    const double error = decodeAndCheckBytes(*model, policy.toStdString(), budget.toStdString(), q);
    QVERIFY2(error >= 0, "the reported bytes are not the bytes held for the live entries");
    QVERIFY2(error < tolerance, qPrintable(QString("relative logit error %1").arg(error)));
    if (q != KvQuant::fp32 && policy == "full") QVERIFY2(error > 0, "a quantised cache decoded exactly: nothing was quantised");
  }

  // Honest sharing: with q_k=v one tensor is held only where the stored values are the stored keys.
  void oneTensorOnlyWhereKeysAreValues_data() {
    QTest::addColumn<QString>("positional");
    QTest::addColumn<bool>("valueGate");
    QTest::addColumn<bool>("shared");
    QTest::newRow("alibi") << "alibi" << false << true;
    QTest::newRow("none") << "none" << false << true;
    QTest::newRow("rope: keys turn, values do not") << "rope" << false << false;
    QTest::newRow("alibi + value gate") << "alibi" << true << false;
  }
  void oneTensorOnlyWhereKeysAreValues() {
    QFETCH(QString, positional);
    QFETCH(bool, valueGate);
    QFETCH(bool, shared);
    ModelConfig c = testing::smallConfig("softmax", positional.toStdString(), 9, 16);
    c.projection_sharing = "q_k=v";
    c.value_gate = valueGate;
    const auto model = testing::randomisedModel(c);
    Decoder decoder(*model, makeEvictionPolicy("full", {}, c), "full", Budget{});
    const Mat full = fullLogits(*model);
    for (size_t t = 0; t < kTokens.size(); ++t) {
      const Mat& row = decoder.step(kTokens[t]);
      QVERIFY((row - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff() < 2e-5f * std::max(1.0f, full.cwiseAbs().maxCoeff()));
    }
    const HeadCache& h = decoder.cache().head(0, 0);
    QCOMPARE(h.valuesAreKeys, shared);
    QCOMPARE(h.values.bytes(), shared ? size_t(0) : h.keys.bytes());
    QCOMPARE(decoder.record().bytes, kvCacheBytesPerToken(c) * kTokens.size());
  }
};

QTEST_MAIN(TestKvQuant)
#include "test_kv_quant.moc"
