// Map diagnostics for variants whose rows do not sum to 1 (sigmoid, a learned sink, a retention
// gate on sigmoid): entropy, normalised entropy and sink are computed on each row divided by its mass and
// say so (row_mass, renormalised); normalised entropy never exceeds 1.
#include <QtTest>

#include <omp.h>

#include <cmath>

#include "analysis/map_diagnostics.h"
#include "model_support.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
// Row i of a causal map: weight c on each visible key, so the row's mass is c (i + 1).
std::vector<float> causalConstant(int T, float c) {
  std::vector<float> a(T * T, 0.0f);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) a[i * T + j] = c;
  return a;
}
}  // namespace

class TestMapDiagnosticsRows : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  // Every key fully on (a sigmoid head that attends to everything): the row, normalised, is
  // uniform, so H / ln n is exactly 1 (raw weights would give -n c ln c / ln n, here 0 for c = 1
  // and above 1 for c = 0.3 at n = 10), and the sink is 1 / n.
  void constantRowsAreUniformOnceNormalised() {
    const int T = 10;
    for (const float c : {1.0f, 0.3f}) {
      const MapDiagnostics d = diagnoseMap(causalConstant(T, c).data(), nullptr, T);
      QVERIFY(std::abs(d.normalised_entropy - 1.0) < 1e-6);
      double entropy = 0, sink = 0, mass = 0;
      for (int i = 1; i < T; ++i) {
        entropy += std::log(i + 1.0) / (T - 1);
        sink += 1.0 / (i + 1) / (T - 1);
        mass += c * (i + 1.0) / (T - 1);
      }
      QVERIFY(std::abs(d.entropy - entropy) < 1e-5);
      QVERIFY(std::abs(d.sink - sink) < 1e-6);
      QVERIFY(std::abs(d.row_mass - mass) < 1e-4);
      QVERIFY(d.renormalised);
    }
  }

  // Scaling a map's rows leaves entropy and sink unchanged (they say where, not how much).
  void scalingRowsChangesOnlyTheMass() {
    const int T = 6;
    Rng rng(3);
    std::vector<float> a(T * T, 0.0f);
    for (int i = 0; i < T; ++i) {
      float sum = 0;
      for (int j = 0; j <= i; ++j) sum += (a[i * T + j] = 0.1f + static_cast<float>(rng.uniform()));
      for (int j = 0; j <= i; ++j) a[i * T + j] /= sum;
    }
    const MapDiagnostics softmaxLike = diagnoseMap(a.data(), nullptr, T);
    QVERIFY(!softmaxLike.renormalised);
    QVERIFY(std::abs(softmaxLike.row_mass - 1.0) < 1e-6);
    for (float& x : a) x *= 0.4f;
    const MapDiagnostics scaled = diagnoseMap(a.data(), nullptr, T);
    QVERIFY(scaled.renormalised);
    QVERIFY(std::abs(scaled.entropy - softmaxLike.entropy) < 1e-6);
    QVERIFY(std::abs(scaled.normalised_entropy - softmaxLike.normalised_entropy) < 1e-6);
    QVERIFY(std::abs(scaled.sink - softmaxLike.sink) < 1e-6);
    QVERIFY(std::abs(scaled.row_mass - 0.4) < 1e-6);
  }

  // The probe: every head's normalised entropy and sink lie in [0, 1]; the result says it
  // renormalised exactly for the variants whose rows do not sum to 1 (linear attention divides by
  // its row sum, gate included, so its rows do).
  void probeOnNonNormalisedVariants_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<bool>("rowsSumToOne");
    QTest::newRow("sigmoid") << "sigmoid" << false;
    QTest::newRow("softmax_sink") << "softmax_sink" << false;
    QTest::newRow("linear") << "linear" << true;
    QTest::newRow("softmax") << "softmax" << true;
  }
  void probeOnNonNormalisedVariants() {
    QFETCH(QString, variant);
    QFETCH(bool, rowsSumToOne);
    ExperimentConfig e;
    e.model = testing::smallConfig(variant.toStdString(), "none", 0, 16);
    e.task.name = "induction";
    e.task.settings = {{"length", 8}};
    e.train.threads = 1;
    Trainer trainer(e);
    testing::randomiseParams(trainer.model(), 5, 0.5f);
    MapDiagnosticsProbe probe(trainer.task(), trainer.config().model.vocab, trainer.sequenceLength(), 4, 9);
    bool renormalised = false;
    for (const auto& layer : probe.measure(trainer.model()))
      for (const MapDiagnostics& d : layer) {
        QVERIFY2(d.normalised_entropy >= 0 && d.normalised_entropy <= 1.0, qPrintable(QString::number(d.normalised_entropy)));
        QVERIFY(d.sink >= 0 && d.sink <= 1.0);
        renormalised = renormalised || d.renormalised;
      }
    QCOMPARE(renormalised, !rowsSumToOne);
  }
};

QTEST_APPLESS_MAIN(TestMapDiagnosticsRows)
#include "test_map_diagnostics_rows.moc"
