// The cache's byte count and the learned retention gate applied hard: bytes are live entries x
// tensors x d_head x 4 (one tensor when K = V, per KV head under grouping); a threshold of 0
// keeps everything and reproduces the dense result exactly; sparsity pressure lowers the mean
// gate and, with it, what hard eviction keeps.
#include <QtTest>

#include "model_support.h"

#include <cstring>

#include "core/random.h"
#include "kv/decoder.h"
#include "kv/kv_bytes.h"
#include "model/model.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
using testing::smallConfig;
using testing::randomisedModel;

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1};
Decoder decoderOf(const Model& model, const std::string& policy, const std::string& budget = "", const Settings& settings = {}) {
  Budget b;
  if (!budget.empty()) parseBudget(budget, "head", b);
  return Decoder(model, makeEvictionPolicy(policy, settings, model.config()), policy, b);
}

std::vector<Mat> decodeAll(Decoder& decoder) {
  std::vector<Mat> out;
  decoder.reset();
  for (int token : kTokens) out.push_back(decoder.step(token));
  return out;
}

}  // namespace

class TestKvGate : public QObject {
  Q_OBJECT

 private slots:
  void bytesCountLiveEntries_data() {
    QTest::addColumn<QString>("sharing");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("tensors");
    QTest::addColumn<QString>("positional");
    QTest::newRow("qkv") << "qkv" << 4 << 2 << "rope";
    QTest::newRow("gqa") << "qkv" << 2 << 2 << "rope";
    QTest::newRow("mqa") << "qkv" << 1 << 2 << "rope";
    QTest::newRow("k=v") << "q_k=v" << 4 << 1 << "alibi";
    QTest::newRow("k=v gqa") << "q_k=v" << 2 << 1 << "alibi";
    QTest::newRow("q=k=v mqa") << "q=k=v" << 1 << 1 << "none";
    // RoPE turns the stored keys and not the values: both are held, and counted
    QTest::newRow("k=v rope") << "q_k=v" << 4 << 2 << "rope";
    QTest::newRow("q=k=v mqa rope") << "q=k=v" << 1 << 2 << "rope";
  }
  void bytesCountLiveEntries() {
    QFETCH(QString, sharing);
    QFETCH(int, kvHeads);
    QFETCH(int, tensors);
    QFETCH(QString, positional);
    ModelConfig c = smallConfig("softmax", positional.toStdString(), 9, 16);
    c.projection_sharing = sharing.toStdString();
    c.n_kv_heads = kvHeads;
    const auto model = randomisedModel(c);
    const int dHead = c.headDim();
    Decoder window = decoderOf(*model, "window", "5");
    decodeAll(window);
    const StepRecord& r = window.record();
    QCOMPARE(static_cast<int>(r.heads.size()), c.n_layers * kvHeads);
    for (const HeadOccupancy& h : r.heads) QCOMPARE(h.bytes, size_t(5) * tensors * dHead * 4);
    QCOMPARE(r.bytes, size_t(c.n_layers) * kvHeads * 5 * tensors * dHead * 4);
    QCOMPARE(r.liveEntries(), c.n_layers * kvHeads * 5);
    // without eviction: what kv_bytes.h says a token costs, times the tokens
    Decoder full = decoderOf(*model, "full");
    decodeAll(full);
    QCOMPARE(full.record().bytes, kvCacheBytesPerToken(c) * kTokens.size());
  }

  // linear layers keep a constant state instead: no entries, fixed bytes
  void linearLayersHoldAState() {
    ModelConfig c = smallConfig("softmax", "rope", 9, 16);
    c.attention = {"linear", "softmax"};
    const auto model = randomisedModel(c);
    Decoder full = decoderOf(*model, "full");
    decodeAll(full);
    const StepRecord& r = full.record();
    QCOMPARE(static_cast<int>(r.heads.size()), c.kvHeads());  // layer 1 only
    for (const HeadOccupancy& h : r.heads) QCOMPARE(h.layer, 1);
    QCOMPARE(r.stateBytes, size_t(c.n_heads) * (c.headDim() * c.headDim() + c.headDim()) * 4);
    QCOMPARE(r.bytes, kvCacheBytesPerToken(c) * kTokens.size());
  }

  void thresholdZeroIsTheDenseModel() {
    ModelConfig c = smallConfig("softmax", "rope", 9, 16);
    c.retention_gate = true;
    for (const char* attention : {"softmax", "sigmoid"}) {
      c.attention = {attention};
      const auto model = randomisedModel(c);
      Decoder dense = decoderOf(*model, "full");
      Decoder zero = decoderOf(*model, "learned_gate", "", {{"threshold", 0}});
      const auto a = decodeAll(dense), b = decodeAll(zero);
      for (size_t t = 0; t < a.size(); ++t) QVERIFY(std::memcmp(a[t].data(), b[t].data(), sizeof(float) * a[t].size()) == 0);
      QCOMPARE(zero.record().liveEntries(), dense.record().liveEntries());
      // a real threshold removes entries and changes the logits
      Decoder hard = decoderOf(*model, "learned_gate", "", {{"threshold", 0.5}});
      hard.reset();
      int evictions = 0;
      Mat last;
      for (int token : kTokens) {
        last = hard.step(token);
        for (const HeadOccupancy& occ : hard.record().heads)
          for (const Eviction& e : occ.evicted) {
            QCOMPARE(QString::fromStdString(e.rule), QString("learned_gate: gate g below the threshold"));
            QCOMPARE(e.position, hard.record().position);  // g is known on arrival: an entry goes in its own step
            ++evictions;
          }
      }
      QVERIFY(evictions > 0);
      QCOMPARE(hard.record().liveEntries() + evictions, dense.record().liveEntries());
      QVERIFY((last - a.back()).cwiseAbs().maxCoeff() > 1e-4);
    }
  }

  // The same short training with and without sparsity pressure: the mean gate over the cache
  // falls, and hard eviction at 0.5 keeps fewer entries.
  void sparsityPressureLowersTheGate() {
    auto run = [](double lambda, double& meanGate) {
      const ExperimentConfig e = testing::gatedToyLanguage(smallConfig("softmax", "rope", 9, 16), lambda);
      Trainer trainer(e);
      for (int s = 0; s < e.train.steps; ++s) trainer.trainStep();
      const std::vector<int> probe = trainer.probeTokens();
      Decoder dense = decoderOf(trainer.model(), "learned_gate", "", {{"threshold", 0}});
      dense.reset();
      for (int token : probe) dense.step(token);
      double sum = 0;
      int n = 0;
      for (int l = 0; l < e.model.n_layers; ++l)
        for (int h = 0; h < trainer.model().config().kvHeads(); ++h)
          for (float g : dense.cache().head(l, h).retention) sum += g, ++n;
      meanGate = sum / n;
      Decoder hard = decoderOf(trainer.model(), "learned_gate", "", {{"threshold", 0.5}});
      hard.reset();
      long live = 0;
      for (int token : probe) {
        hard.step(token);
        live += hard.record().liveEntries();
      }
      return live;
    };
    double freeGate = 0, pressedGate = 0;
    const long freeLive = run(0.0, freeGate), pressedLive = run(2.0, pressedGate);
    QVERIFY2(pressedGate < freeGate - 0.2, qPrintable(QString("mean g %1 with lambda 2 vs %2 without").arg(pressedGate).arg(freeGate)));
    QVERIFY2(pressedLive < freeLive, qPrintable(QString("live %1 vs %2").arg(pressedLive).arg(freeLive)));
  }
};

QTEST_APPLESS_MAIN(TestKvGate)
#include "test_kv_gate.moc"
