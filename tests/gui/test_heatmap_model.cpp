// The attention heatmap and its model, drawn offscreen: known weights give known colours at known
// cells, and masked cells never look like zero weights.
#include <QHelpEvent>
#include <QImage>
#include <QSignalSpy>
#include <QToolTip>
#include <QtTest>
#include <cmath>
#include <limits>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "colormap.h"

using namespace attnlab;

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

// One layer, one head, three tokens, causal:
//   weights  1    .    .        (. = masked, score -inf)
//            0.5  0.5  .
//            0    0.25 0.75     (the 0 is a real zero weight: its key is visible)
std::shared_ptr<TraceSnapshot> threeTokenTrace(int layers = 1, int heads = 1) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->step = 7;
  snapshot->trace.tokens = {4, 9, 2};
  snapshot->trace.labels = {"the", " ", "supercalifragilistic"};
  HeadTrace head;
  head.weights.resize(3, 3);
  head.weights << 1, 0, 0, 0.5f, 0.5f, 0, 0, 0.25f, 0.75f;
  head.scores.resize(3, 3);
  head.scores << 2, kMasked, kMasked, 1, 1, kMasked, -30, 0.3f, 1.4f;
  for (int l = 0; l < layers; ++l) {
    LayerTrace layer;
    layer.variant = "softmax";
    for (int h = 0; h < heads; ++h) layer.heads.push_back(head);
    snapshot->trace.layers.push_back(layer);
  }
  return snapshot;
}

QImage render(AttentionHeatmapView& view) { return view.grab().toImage().convertToFormat(QImage::Format_RGB32); }

QRgb centre(const QImage& image, const QRect& cell) { return image.pixel(cell.center()); }

bool isLightGrey(QRgb c) { return qRed(c) == qGreen(c) && qGreen(c) == qBlue(c) && qRed(c) >= 140; }

double luminance(const QColor& c) { return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF(); }

}  // namespace

class HeatmapModelTest : public QObject {
  Q_OBJECT
 private slots:
  void modelExposesTheSelectedMap() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    QVERIFY(!model.hasMap());
    QSignalSpy shape(&model, &AttentionMapModel::shapeChanged);
    model.setTrace(threeTokenTrace(2, 3));
    QCOMPARE(shape.count(), 1);
    QCOMPARE(model.layerCount(), 2);
    QCOMPARE(model.headCount(1), 3);
    QCOMPARE(modelSelection.shown().size(), 3);
    QCOMPARE(model.step(), 7);
    QCOMPARE(modelSelection.shown().maxWeight(), 1.0f);
    QCOMPARE(modelSelection.shown().weight(2, 2), 0.75f);
    QVERIFY(modelSelection.shown().isMasked(0, 2));
    QVERIFY(!modelSelection.shown().isMasked(2, 0));  // weight 0, but visible
    QCOMPARE(modelSelection.shown().weight(2, 0), 0.0f);
    QCOMPARE(model.tokenLabel(1), QString(QChar(0x2423)));  // a blank made visible

    modelSelection.select(1, 2);
    QCOMPARE(modelSelection.layer(), 1);
    QCOMPARE(modelSelection.head(), 2);
    modelSelection.select(5, 0);  // does not exist: ignored
    QCOMPARE(modelSelection.layer(), 1);
    model.setTrace(threeTokenTrace(2, 3));  // same shape: the selection stays
    QCOMPARE(modelSelection.head(), 2);
    QCOMPARE(shape.count(), 1);
    model.setTrace(threeTokenTrace(1, 1));  // smaller: back to the first head
    QCOMPARE(modelSelection.layer(), 0);
    QCOMPARE(modelSelection.head(), 0);
    model.clear();
    QVERIFY(!model.hasMap());
  }

  void knownWeightsGiveKnownColours() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(threeTokenTrace());
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(400, 360);
    const QImage image = render(view);
    QCOMPARE(centre(image, view.cellRect(0, 0)), rampColor(1.0).rgb());
    QCOMPARE(centre(image, view.cellRect(1, 0)), rampColor(0.5).rgb());
    QCOMPARE(centre(image, view.cellRect(1, 1)), rampColor(0.5).rgb());
    QCOMPARE(centre(image, view.cellRect(2, 1)), rampColor(0.25).rgb());
    QCOMPARE(centre(image, view.cellRect(2, 2)), rampColor(0.75).rgb());
    QCOMPARE(centre(image, view.cellRect(2, 0)), rampColor(0.0).rgb());
    QVERIFY(rampColor(0.0) != rampColor(0.25));
  }

  void maskedCellsDifferFromZeroWeights() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(threeTokenTrace());
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(400, 360);
    const QImage image = render(view);
    const QRgb zero = rampColor(0.0).rgb();
    // Every pixel of the zero-weight cell is the ramp's zero colour...
    const QRect zeroCell = view.cellRect(2, 0);
    for (int y = zeroCell.top(); y <= zeroCell.bottom(); ++y)
      for (int x = zeroCell.left(); x <= zeroCell.right(); ++x) QCOMPARE(image.pixel(x, y), zero);
    // ...and every pixel of a masked cell is light grey (fill or hatch), with both present.
    for (const QRect& cell : {view.cellRect(0, 1), view.cellRect(0, 2), view.cellRect(1, 2)}) {
      QSet<QRgb> seen;
      for (int y = cell.top(); y <= cell.bottom(); ++y)
        for (int x = cell.left(); x <= cell.right(); ++x) {
          QVERIFY2(isLightGrey(image.pixel(x, y)), qPrintable(QColor(image.pixel(x, y)).name()));
          seen.insert(image.pixel(x, y));
        }
      QVERIFY2(seen.size() >= 2, "masked cells are hatched, not flat");
    }
  }

  void tooltipNamesTheCell() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(threeTokenTrace());
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(400, 360);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QPoint inside = view.cellRect(2, 1).center();
    QHelpEvent help(QEvent::ToolTip, inside, view.mapToGlobal(inside));
    QApplication::sendEvent(&view, &help);
    const QString text = QToolTip::text();
    QVERIFY2(text.contains(QStringLiteral("query 2")) && text.contains(QStringLiteral("key 1")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("weight 0.25")) && text.contains(QStringLiteral("score 0.3")), qPrintable(text));

    const QPoint masked = view.cellRect(0, 2).center();
    QHelpEvent maskedHelp(QEvent::ToolTip, masked, view.mapToGlobal(masked));
    QApplication::sendEvent(&view, &maskedHelp);
    QVERIFY2(QToolTip::text().contains(QStringLiteral("masked")), qPrintable(QToolTip::text()));
  }

  void emptyModelDrawsNoCells() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(300, 300);
    QVERIFY(view.cellRect(0, 0).isEmpty());
    const QImage image = render(view);  // must not crash, and shows the placeholder text
    QVERIFY(!image.isNull());
  }

  void rampBrightensSteadily() {
    // Lightness must rise with the weight so larger weights always read as brighter.
    double previous = -1;
    for (int i = 0; i <= 20; ++i) {
      const double now = luminance(rampColor(i / 20.0));
      QVERIFY2(now > previous, qPrintable(QStringLiteral("at t=%1").arg(i / 20.0)));
      previous = now;
    }
    QCOMPARE(rampColor(-1.0), rampColor(0.0));
    QCOMPARE(rampColor(std::nan("")), rampColor(0.0));
    QCOMPARE(rampColor(2.0), rampColor(1.0));
  }
};

QTEST_MAIN(HeatmapModelTest)
#include "test_heatmap_model.moc"
