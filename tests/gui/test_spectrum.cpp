// The spectra model and view, offscreen: known eigenvalues are the known points in the complex
// plane, the null disk has the known radius, the controls move through snapshots and heads.
#include <QChart>
#include <QCheckBox>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSlider>
#include <QValueAxis>
#include <QtTest>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "model/model.h"
#include "spectrum_history.h"
#include "spectrum_model.h"
#include "spectrum_view.h"

using namespace attnlab;
using C = std::complex<double>;

namespace {

HeadSpectrum head(int layer, int h, std::vector<C> eigenvalues, std::vector<double> singular, double skew = 0.25) {
  HeadSpectrum s;
  s.layer = layer;
  s.head = h;
  s.eigenvalues = std::move(eigenvalues);
  s.singularValues = std::move(singular);
  s.skewEnergyShare = skew;
  s.nonNormality = 0.5;
  return s;
}

// Two layers of two heads, two snapshots (steps 0 and 100). Layer 0 head 0 at step 100 has the
// eigenvalues 1 +- 2i and -0.5 and a RoPE pair; the null radius is 1.5.
std::shared_ptr<SpectrumSeries> twoSnapshots() {
  auto series = std::make_shared<SpectrumSeries>();
  SpectrumSnapshot start{0, {}}, end{100, {}};
  for (int layer = 0; layer < 2; ++layer)
    for (int h = 0; h < 2; ++h) {
      start.heads.push_back(head(layer, h, {C(0.1 * (h + 1), 0)}, {0.3, 0.1}));
      end.heads.push_back(head(layer, h, {C(0.2, 0.2 * h)}, {0.5, 0.2}));
    }
  end.heads[0] = head(0, 0, {C(1, 2), C(1, -2), C(-0.5, 0)}, {3, 2, 0.5}, 0.8);
  end.heads[0].rope = {{1.0, 0.4, 0.5}, {0.1, 0.2, -3.0}};
  series->snapshots = {std::make_shared<const SpectrumSnapshot>(start), std::make_shared<const SpectrumSnapshot>(end)};
  series->nullRadius = 1.5;
  series->nullDraw = {head(0, 0, {C(-1, 0.5), C(0.25, -1.25)}, {}), head(0, 1, {C(0.5, 0.5)}, {})};
  return series;
}

QList<QPointF> pointsOf(QAbstractSeries* series) {
  if (auto* xy = qobject_cast<QXYSeries*>(series)) return xy->points();
  return {};
}

QAbstractSeries* seriesNamed(QChart* chart, const QString& name) {
  for (QAbstractSeries* s : chart->series())
    if (s->name() == name) return s;
  return nullptr;
}

}  // namespace

class TestSpectrum : public QObject {
  Q_OBJECT
 private slots:
  void modelGivesKnownPoints() {
    SpectrumModel model;
    QVERIFY(!model.hasData());
    QVERIFY(model.shownHeads().empty());
    model.setSeries(twoSnapshots());
    QCOMPARE(model.layerCount(), 2);
    QCOMPARE(model.headCount(1), 2);
    QCOMPARE(model.snapshotCount(), 2);
    QCOMPARE(model.snapshotIndex(), 1);  // the latest is shown first
    QCOMPARE(model.step(), 100);
    QCOMPARE(model.shownHeads(), std::vector<int>{0});
    QCOMPARE(model.eigenvaluePoints(0), QList<QPointF>({{1, 2}, {1, -2}, {-0.5, 0}}));
    QCOMPARE(model.singularValuePoints(0), QList<QPointF>({{1, 3}, {2, 2}, {3, 0.5}}));
    QCOMPARE(model.ropePhasePoints(0), QList<QPointF>({{0, 0.5}, {1, -3.0}}));
    QCOMPARE(model.nullDrawPoints(0), QList<QPointF>({{-1, 0.5}, {0.25, -1.25}}));
    QVERIFY(model.usesRope());
    QCOMPARE(model.numbers().size(), size_t(1));
    QCOMPARE(model.numbers()[0].skewEnergyShare, 0.8);
    // The plane holds every eigenvalue of the layer in every snapshot: |Im| = 2 is the largest.
    QCOMPARE(model.planeExtent(), 2 * 1.1);
    QCOMPARE(model.maxSingularValue(), 3.0);
    QCOMPARE(model.maxRank(), 3);

    QSignalSpy changed(&model, &SpectrumModel::spectrumChanged);
    model.setSnapshot(-4);  // clamped to the first
    QCOMPARE(model.snapshotIndex(), 0);
    QCOMPARE(model.step(), 0);
    QCOMPARE(model.eigenvaluePoints(0), QList<QPointF>({{0.1, 0}}));
    QVERIFY(!model.usesRope());
    QCOMPARE(changed.count(), 1);
  }

  void rangesCanFitTheShownSnapshot() {
    SpectrumModel model;
    model.setSeries(twoSnapshots());
    QCOMPARE(model.ropeMagnitudePoints(0), QList<QPointF>({{0, 0.4}, {1, 0.2}}));
    QCOMPARE(model.maxRopeMagnitude(), 0.4);
    model.setSnapshot(0);
    QCOMPARE(model.planeExtent(), 2 * 1.1);  // every snapshot: the later 1 + 2i sets the range
    QCOMPARE(model.maxSingularValue(), 3.0);
    QSignalSpy changed(&model, &SpectrumModel::spectrumChanged);
    model.setFitToSnapshot(true);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.planeExtent(), 1.5 * 1.1);  // step 0 lies inside the null disk
    QCOMPARE(model.maxSingularValue(), 0.3);
    QCOMPARE(model.maxRank(), 2);
    QCOMPARE(model.maxRopeMagnitude(), 0.0);
  }

  void allHeadsOfALayer() {
    SpectrumModel model;
    model.setSeries(twoSnapshots());
    model.select(1, SpectrumModel::kAllHeads);
    QCOMPARE(model.selectedLayer(), 1);
    QCOMPARE(model.shownHeads(), std::vector<int>({0, 1}));
    QCOMPARE(model.eigenvaluePoints(1), QList<QPointF>({{0.2, 0.2}}));
    QCOMPARE(model.numbers().size(), size_t(2));
    QCOMPARE(model.planeExtent(), 1.5 * 1.1);  // layer 1 stays inside the null disk
    model.select(5, 0);                        // no such layer: ignored
    model.select(1, 2);                        // no such head: ignored
    QCOMPARE(model.selectedLayer(), 1);
    QCOMPARE(model.selectedHead(), SpectrumModel::kAllHeads);
  }

  void duplicateHeadsAreRefused() {
    SpectrumModel model;
    auto series = twoSnapshots();
    SpectrumSnapshot first = *series->snapshots[0];
    first.heads.push_back(first.heads[1]);
    series->snapshots[0] = std::make_shared<const SpectrumSnapshot>(first);
    try {
      model.setSeries(series);
      QFAIL("a duplicate head was accepted");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(QString(e.what()), QStringLiteral("spectra: snapshot at step 0 lists layer 0 head 1 twice"));
    }
    QVERIFY(!model.hasData());
  }

  void viewDrawsTheModel() {
    SpectrumModel model;
    SpectrumView view(&model);
    view.resize(1100, 600);
    model.setSeries(twoSnapshots());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QChart* plane = view.planeChart();
    auto* disk = qobject_cast<QLineSeries*>(seriesNamed(plane, "Ginibre null disk"));
    QVERIFY(disk);
    for (const QPointF& p : disk->points()) QVERIFY(std::abs(std::hypot(p.x(), p.y()) - 1.5) < 1e-9);
    QCOMPARE(pointsOf(seriesNamed(plane, "head 1")), QList<QPointF>({{1, 2}, {1, -2}, {-0.5, 0}}));
    QCOMPARE(pointsOf(seriesNamed(plane, "random init draw")).size(), 2);
    // Equal units across and up: the shorter side spans exactly the extent, the longer one more.
    auto* x = static_cast<QValueAxis*>(plane->axes(Qt::Horizontal).constFirst());
    auto* y = static_cast<QValueAxis*>(plane->axes(Qt::Vertical).constFirst());
    const QRectF area = plane->plotArea();
    QCOMPARE(std::min(x->max(), y->max()), 2.2);
    QVERIFY(area.width() > 100 && area.height() > 100);
    QVERIFY(std::abs(x->max() / y->max() - area.width() / area.height()) < 1e-6);
    QCOMPARE(x->min(), -x->max());
    QVERIFY(!view.ropeChart()->series().isEmpty());

    view.snapshotSlider()->setValue(0);  // the slider moves the model
    QCOMPARE(model.snapshotIndex(), 0);
    QCOMPARE(pointsOf(seriesNamed(plane, "head 1")), QList<QPointF>({{0.1, 0}}));
    QCOMPARE(std::min(x->max(), y->max()), 2.2);  // axes stay put across snapshots

    model.select(0, SpectrumModel::kAllHeads);  // overlay: one eigenvalue series per head
    QVERIFY(seriesNamed(plane, "head 1") && seriesNamed(plane, "head 2"));
    QCOMPARE(view.singularChart()->series().size(), 2);
  }

  // AttentionLayer rotates only dot-product scores, so a linear layer of a RoPE model has no
  // rotated pairs: the view must not offer a RoPE chart for it, and does for the softmax layer.
  void aLayerWithoutRotationShowsNoRopePairs() {
    ModelConfig config;
    config.vocab = 10;
    config.d_model = 16;
    config.n_layers = 2;
    config.n_heads = 2;
    config.context = 16;
    config.attention_only = true;
    config.attention = {"linear", "softmax"};
    config.positional = "rope";
    const Model fresh(config, 3);
    auto series = std::make_shared<SpectrumSeries>(spectrumNull(config, 4));
    series->snapshots = {std::make_shared<const SpectrumSnapshot>(spectrumFrame(config, 0, fresh.params()))};
    SpectrumModel model;
    SpectrumView view(&model);
    model.setSeries(series);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QWidget* ropeView = view.ropeChart()->scene()->views().constFirst();
    model.select(0, SpectrumModel::kAllHeads);
    QVERIFY(!model.usesRope());
    QVERIFY(model.ropePhasePoints(0).isEmpty() && model.ropePhasePoints(1).isEmpty());
    QVERIFY(!ropeView->isVisible());
    model.select(1, SpectrumModel::kAllHeads);
    QVERIFY(model.usesRope());
    QCOMPARE(model.ropePhasePoints(0).size(), 4);  // d_head 8: 4 rotated pairs
    QVERIFY(ropeView->isVisible());
  }

  // A trained spectrum 100 times the null radius hides the disk on linear axes: the plane turns
  // to the log-radius scale by itself, where the null radius lands on the drawn disk's edge (1)
  // and the trained eigenvalue at log2(1 + 100), in view together. The box switches back.
  void theNullDiskStaysVisibleBesideATrainedSpectrum() {
    auto series = twoSnapshots();
    SpectrumSnapshot trained = *series->snapshots[1];
    trained.heads[0].eigenvalues = {C(150, 0), C(0, 1.5), C(-1.5 * std::cos(1.0), 1.5 * std::sin(1.0))};
    series->snapshots[1] = std::make_shared<const SpectrumSnapshot>(trained);
    const QPointF onNull = logRadiusPoint(C(0, 1.5), 1.5);
    QVERIFY(std::abs(onNull.x()) < 1e-12 && std::abs(onNull.y() - 1) < 1e-12);
    QCOMPARE(logRadiusPoint(C(0, 0), 1.5), QPointF(0, 0));
    SpectrumModel model;
    SpectrumView view(&model);
    view.resize(1100, 600);
    model.setSeries(series);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(model.logRadius());
    auto* log = view.findChild<QCheckBox*>(QStringLiteral("logRadius"));
    QVERIFY(log && log->isChecked());
    QChart* plane = view.planeChart();
    auto* disk = qobject_cast<QLineSeries*>(seriesNamed(plane, "Ginibre null disk"));
    QVERIFY(disk);
    for (const QPointF& p : disk->points()) QVERIFY(std::abs(std::hypot(p.x(), p.y()) - 1) < 1e-9);
    const QList<QPointF> drawn = pointsOf(seriesNamed(plane, "head 1"));
    QCOMPARE(drawn.size(), 3);
    QVERIFY(std::abs(drawn[0].x() - std::log2(101.0)) < 1e-9 && std::abs(drawn[0].y()) < 1e-12);
    for (int i : {1, 2}) QVERIFY(std::abs(std::hypot(drawn[i].x(), drawn[i].y()) - 1) < 1e-9);  // on the disk's edge
    QVERIFY(std::abs(std::atan2(drawn[2].y(), drawn[2].x()) - (std::numbers::pi - 1.0)) < 1e-9);  // the angle is kept
    auto* x = static_cast<QValueAxis*>(plane->axes(Qt::Horizontal).constFirst());
    auto* y = static_cast<QValueAxis*>(plane->axes(Qt::Vertical).constFirst());
    QCOMPARE(std::min(x->max(), y->max()), std::log2(101.0) * 1.1);  // the disk is a seventh of it, not a 100th
    QVERIFY(x->titleText().contains("log radius"));
    QCOMPARE(model.spectralRadius(0), 150.0);  // the numbers' |lambda|max / null reads the eigenvalues, not the plot
    log->setChecked(false);  // linear, as computed
    QVERIFY(!model.logRadius());
    QCOMPARE(pointsOf(seriesNamed(plane, "head 1")).first(), QPointF(150, 0));
    QVERIFY(!x->titleText().contains("log"));
  }

  void playRunsToTheLastSnapshot() {
    SpectrumModel model;
    SpectrumView view(&model);
    model.setSeries(twoSnapshots());
    model.setSnapshot(1);
    view.setPlayInterval(1);
    view.setPlaying(true);  // at the end: starts again from the first
    QCOMPARE(model.snapshotIndex(), 0);
    QVERIFY(view.playing());
    QTRY_VERIFY(!view.playing());
    QCOMPARE(model.snapshotIndex(), 1);
    QCOMPARE(view.snapshotSlider()->value(), 1);
  }
};

QTEST_MAIN(TestSpectrum)
#include "test_spectrum.moc"
