// Map diagnostics against maps with known answers, and the probe that measures a model.
#include <QtTest>

#include <cmath>
#include <limits>

#include "analysis/map_diagnostics.h"
#include "io/config_json.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
constexpr float kMasked = -std::numeric_limits<float>::infinity();

std::vector<float> causalUniform(int T) {
  std::vector<float> a(T * T, 0.0f);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j) a[i * T + j] = 1.0f / (i + 1);
  return a;
}
}  // namespace

class TestAnalysisMaps : public QObject {
  Q_OBJECT

 private slots:
  // Every key visible and equally weighted: entropy log(n), normalised 1, distance (n^2 - 1) / (3n).
  void uniformFullMap() {
    const int n = 8;
    const std::vector<float> a(n * n, 1.0f / n), scores(n * n, 0.0f);
    const MapDiagnostics d = diagnoseMap(a.data(), scores.data(), n);
    QVERIFY(std::abs(d.entropy - std::log(8.0)) < 1e-6);
    QVERIFY(std::abs(d.normalised_entropy - 1.0) < 1e-6);
    QVERIFY(std::abs(d.sink - 1.0 / n) < 1e-6);
    double distance = 0;  // mean over rows of mean |i - j|
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) distance += std::abs(i - j) / double(n * n);
    QVERIFY(std::abs(d.mean_distance - distance) < 1e-6);
    QVERIFY(std::abs(d.effective_rank - 1.0) < 1e-4);  // all rows equal: rank 1
  }

  // Causal uniform: row i spreads over i + 1 keys, so every row's normalised entropy is 1.
  void causalUniformMap() {
    const int n = 10;
    const std::vector<float> a = causalUniform(n);
    const MapDiagnostics d = diagnoseMap(a.data(), nullptr, n);
    double entropy = 0;
    for (int i = 1; i < n; ++i) entropy += std::log(i + 1.0) / (n - 1);  // row 0 has no choice and is skipped
    QVERIFY(std::abs(d.entropy - entropy) < 1e-5);
    QVERIFY(std::abs(d.normalised_entropy - 1.0) < 1e-6);
    // The same with the mask given as -inf scores.
    std::vector<float> scores(n * n, 0.0f);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) scores[i * n + j] = kMasked;
    QVERIFY(std::abs(diagnoseMap(a.data(), scores.data(), n).entropy - d.entropy) < 1e-9);
  }

  // The identity shifted one left (row i attends i - 1; row 0 itself): previous-token score 1,
  // distance 1, entropy 0.
  void shiftedIdentityMap() {
    const int n = 9;
    std::vector<float> a(n * n, 0.0f);
    a[0] = 1;
    for (int i = 1; i < n; ++i) a[i * n + i - 1] = 1;
    const MapDiagnostics d = diagnoseMap(a.data(), nullptr, n);
    QCOMPARE(d.previous_token, 1.0);
    QCOMPARE(d.mean_distance, 1.0);
    QCOMPARE(d.entropy, 0.0);
    QCOMPARE(d.normalised_entropy, 0.0);
    QVERIFY(std::abs(d.sink - 1.0 / (n - 1)) < 1e-9);  // only row 1's previous token is the first
    // Rows 0 and 1 coincide: singular values sqrt(2) and n - 2 ones; effective rank exp(entropy).
    const double total = std::sqrt(2.0) + (n - 2);
    const double p0 = std::sqrt(2.0) / total, p1 = 1.0 / total;
    QVERIFY(std::abs(d.effective_rank - std::exp(-p0 * std::log(p0) - (n - 2) * p1 * std::log(p1))) < 1e-4);
  }

  // Everything on the first token: sink score 1, rank 1.
  void firstColumnMap() {
    const int n = 7;
    std::vector<float> a(n * n, 0.0f);
    for (int i = 0; i < n; ++i) a[i * n] = 1;
    const MapDiagnostics d = diagnoseMap(a.data(), nullptr, n);
    QCOMPARE(d.sink, 1.0);
    QVERIFY(std::abs(d.mean_distance - 3.5) < 1e-9);  // mean of 1..6 (row 0 has no choice)
    QVERIFY(std::abs(d.effective_rank - 1.0) < 1e-4);
    QVERIFY(std::abs(effectiveRank(a.data(), n) - 1.0) < 1e-4);
  }

  // On [r, r], a map from each repeat position i to i - n + 1 is a perfect induction head.
  void inductionStripe() {
    const int n = 6, T = 2 * n;
    std::vector<float> a = causalUniform(T);
    QVERIFY(inductionScore(a.data(), T, n) < 0.2);
    for (int i = n; i < T; ++i) {
      for (int j = 0; j < T; ++j) a[i * T + j] = 0;
      a[i * T + i - n + 1] = 1;
    }
    QCOMPARE(inductionScore(a.data(), T, n), 1.0);
    // After a one-token prefix the repeat starts one row later: [t0, r, r], T = 2n + 1.
    const int P = T + 1;
    std::vector<float> b = causalUniform(P);
    for (int i = n + 1; i < P; ++i) {
      for (int j = 0; j < P; ++j) b[i * P + j] = 0;
      b[i * P + i - n + 1] = 1;
    }
    QCOMPARE(inductionScore(b.data(), P, n, 1), 1.0);
    QVERIFY(inductionScore(b.data(), P, n, 0) < 1.0);
  }

  // On a model: every head's numbers lie in their ranges; layer means are the heads' means.
  void probeMeasuresAModel() {
    ExperimentConfig c;
    QVERIFY(loadPreset("induction", c).empty());
    QVERIFY(applyOverride(c, "model.d_model=32").empty());
    Trainer t(c);
    MapDiagnosticsProbe probe(t.task(), t.config().model.vocab, t.sequenceLength(), 4, 3);
    const auto heads = probe.measure(t.model());
    QCOMPARE(heads.size(), size_t(2));
    QCOMPARE(heads[0].size(), size_t(4));
    for (const auto& layer : heads)
      for (const MapDiagnostics& d : layer) {
        QVERIFY(d.normalised_entropy > 0.5 && d.normalised_entropy <= 1.0 + 1e-6);  // near uniform at initialisation
        QVERIFY(d.previous_token > 0 && d.previous_token < 1);
        QVERIFY(d.induction > 0 && d.induction < 1);
        QVERIFY(d.effective_rank >= 1);
      }
    const auto means = MapDiagnosticsProbe::layerMeans(heads);
    double sum = 0;
    for (const MapDiagnostics& d : heads[1]) sum += d.sink / 4;
    QVERIFY(std::abs(means[1].sink - sum) < 1e-12);
    // Measuring twice gives the same numbers (the probe's batches are fixed).
    QCOMPARE(probe.measure(t.model())[1][2].entropy, heads[1][2].entropy);
    // Skipping the effective rank leaves it 0 and changes nothing else.
    const auto rankless = probe.measure(t.model(), EffectiveRank::skipped);
    for (size_t l = 0; l < heads.size(); ++l)
      for (size_t h = 0; h < heads[l].size(); ++h) {
        const MapDiagnostics &a = heads[l][h], &b = rankless[l][h];
        QCOMPARE(b.effective_rank, 0.0);
        for (auto [x, y] : {std::pair{a.entropy, b.entropy}, {a.normalised_entropy, b.normalised_entropy}, {a.mean_distance, b.mean_distance},
                            {a.sink, b.sink}, {a.previous_token, b.previous_token}, {a.induction, b.induction}, {a.row_mass, b.row_mass}})
          QCOMPARE(y, x);
      }
  }
};

QTEST_APPLESS_MAIN(TestAnalysisMaps)
#include "test_analysis_maps.moc"
