// Joint query-key embedding: PCA on a known subspace, Pearson on hand-made sets, and the
// normalisation's promises on a real head (key mean meets query mean).
#include <QtTest>

#include <cmath>

#include "analysis/analysis.h"
#include "analysis/qk_embedding.h"
#include "core/random.h"
#include "io/config_json.h"
#include "train/trainer.h"

using namespace attnlab;

class TestAnalysisEmbedding : public QObject {
  Q_OBJECT

 private slots:
  // 30 points on a random 3D subspace of R^12 (plus an offset): PCA to 3D keeps every distance.
  void pcaRecoversDistancesOnA3dSubspace() {
    Rng rng(21);
    Eigen::MatrixXd basis(12, 3), coords(30, 3);
    for (int i = 0; i < 12; ++i)
      for (int j = 0; j < 3; ++j) basis(i, j) = rng.normal();
    basis = Eigen::HouseholderQR<Eigen::MatrixXd>(basis).householderQ() * Eigen::MatrixXd::Identity(12, 3);
    for (int i = 0; i < 30; ++i)
      for (int j = 0; j < 3; ++j) coords(i, j) = rng.normal() * (j + 1);
    Eigen::MatrixXd points = coords * basis.transpose();
    points.rowwise() += Eigen::RowVectorXd::Constant(12, 5.0);
    std::array<double, 3> explained{};
    const Eigen::MatrixXd y = pca3(points, &explained);
    for (int i = 0; i < 30; ++i)
      for (int j = 0; j < i; ++j)
        QVERIFY(std::abs((y.row(i) - y.row(j)).norm() - (points.row(i) - points.row(j)).norm()) < 1e-9);
    QVERIFY(std::abs(explained[0] + explained[1] + explained[2] - 1.0) < 1e-12);
    QVERIFY(explained[0] >= explained[1] && explained[1] >= explained[2]);
    // Points on a line: the second and third axes carry nothing.
    Eigen::MatrixXd line(5, 4);
    for (int i = 0; i < 5; ++i) line.row(i) << i, 2 * i, 0, 1;
    const Eigen::MatrixXd l = pca3(line, &explained);
    QVERIFY(std::abs(explained[0] - 1.0) < 1e-12 && explained[1] < 1e-12);
    QVERIFY(std::abs(std::abs(l(4, 0) - l(0, 0)) - std::sqrt(80.0)) < 1e-9);
    // Fewer than 3 dimensions: the missing axes are 0.
    QVERIFY(pca3(Eigen::MatrixXd::Random(6, 2)).col(2).isZero());
  }

  // x = 1 2 3, y = 1 3 2: cov 1, variances 2 and 2, r = 0.5. Exact lines give +-1; constants 0.
  void pearsonOnHandMadeSets() {
    QVERIFY(std::abs(pearson({1, 2, 3}, {1, 3, 2}) - 0.5) < 1e-15);
    QVERIFY(std::abs(pearson({1, 2, 3, 4}, {-2, -4, -6, -8}) + 1.0) < 1e-15);
    QVERIFY(std::abs(pearson({0, 1, 0, 1}, {0, 0, 1, 1})) < 1e-15);
    QCOMPARE(pearson({1, 1, 1}, {1, 2, 3}), 0.0);
    // x = 1 2 3 4 5, y = 2 1 4 3 5: cov 8, variances 10 and 10 (sums of squares), r = 0.8.
    QVERIFY(std::abs(pearson({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) - 0.8) < 1e-15);
  }

  // On a model's head: one query and one key point per token, keys' mean equals queries' mean
  // (the projection is affine, so it keeps the match), and correlations are in [-1, 1].
  void embeddingOfAHead() {
    ExperimentConfig c;
    QVERIFY(loadPreset("induction", c).empty());
    QVERIFY(applyOverride(c, "model.d_model=32").empty());
    Trainer t(c);
    for (int s = 0; s < 20; ++s) t.trainStep();
    const Batch b = validationBatches(t, 1, 2).front();
    std::vector<std::vector<int>> sequences = {t.probeTokens()};
    for (int i = 0; i < 3; ++i) sequences.emplace_back(b.inputs.begin() + i * b.T, b.inputs.begin() + (i + 1) * b.T);
    const QkEmbedding e = qkEmbedding(t.model(), t.task().vocabulary(), sequences, 1, 2);
    size_t tokens = 0;
    for (const auto& s : sequences) tokens += s.size();
    QCOMPARE(e.points.size(), 2 * tokens);
    Eigen::Vector3d queryMean = Eigen::Vector3d::Zero(), keyMean = Eigen::Vector3d::Zero();
    for (const EmbeddedPoint& p : e.points) (p.query ? queryMean : keyMean) += Eigen::Vector3d(p.x, p.y, p.z) / tokens;
    QVERIFY2((queryMean - keyMean).norm() < 1e-6, qPrintable(QString::number((queryMean - keyMean).norm())));
    QCOMPARE(e.points[3].position, 1);  // points come as (query, key) per token
    QVERIFY(!e.points[3].query);
    QCOMPARE(e.points[3].label, t.task().vocabulary().token(sequences[0][1]));
    QVERIFY(std::abs(e.correlation_raw) <= 1 && std::abs(e.correlation_normalised) <= 1);
    QVERIFY(e.explained[0] > 0 && e.explained[0] <= 1);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, qkEmbedding(t.model(), t.task().vocabulary(), sequences, 2, 0));
  }
};

QTEST_APPLESS_MAIN(TestAnalysisEmbedding)
#include "test_analysis_embedding.moc"
