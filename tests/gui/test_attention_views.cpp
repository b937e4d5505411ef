// The attention views and what stands behind them, offscreen: the colour of a known map in linear
// and log scale, the model view's thumbnails and click selection, the head view's lines, the
// evicted marker, the probe editor, the training charts, exports to PNG/SVG/CSV, and probe
// edits traced by the training worker (paused and finished).
#include <QApplication>
#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTextStream>
#include <QtTest>

#include "svg_cells.h"
#include "tiny_experiment.h"
#include <cmath>
#include <limits>

#include "attention_difference_model.h"
#include "attention_difference_view.h"
#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "map_image.h"
#include "colormap.h"
#include "head_view.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "metric_chart_view.h"
#include "model_view.h"
#include "probe_editor.h"
#include "training_session.h"
#include "training_view.h"
#include "view_export.h"

using namespace attnlab;

namespace {
using testing::tinyConfig;

constexpr float kMasked = -std::numeric_limits<float>::infinity();

// Four tokens, causal. Head 0 (rows):   1 . . .  /  .5 .5 . .  /  .1 .01 .89 .  /  0 .001 .2 .799
// Head 1 is the transpose-like "previous token" head: row i puts 1 on key i-1 (row 0 on key 0).
std::shared_ptr<TraceSnapshot> fourTokenTrace(int layers = 2) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->step = 3;
  snapshot->trace.tokens = {0, 1, 2, 3};
  snapshot->trace.labels = {"a", "b", "c", "d"};
  snapshot->vocabulary = std::make_shared<Vocabulary>(std::vector<std::string>{"a", "b", "c", "d", "e"}, Vocabulary::Level::Word);
  snapshot->maxProbeLength = 6;
  HeadTrace first, previous;
  first.weights.resize(4, 4);
  first.weights << 1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.1f, 0.01f, 0.89f, 0, 0, 0.001f, 0.2f, 0.799f;
  previous.weights.resize(4, 4);
  previous.weights << 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0;
  for (HeadTrace* h : {&first, &previous}) {
    h->scores = Mat::Zero(4, 4);
    for (int q = 0; q < 4; ++q)
      for (int k = q + 1; k < 4; ++k) h->scores(q, k) = kMasked;
  }
  first.scores(2, 1) = -1.5f;
  for (int l = 0; l < layers; ++l) snapshot->trace.layers.push_back({"softmax", {first, previous}, {}});
  return snapshot;
}

QImage render(QWidget& view) { return view.grab().toImage().convertToFormat(QImage::Format_RGB32); }

QString readAll(const QString& file) {
  QFile f(file);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}


}  // namespace

class AttentionViewsTest : public QObject {
  Q_OBJECT
 private slots:
  // SVG export of the difference view: a rectangle per cell with the cell's colour (no embedded
  // bitmap), and the token labels as text.
  void theSvgDifferenceDrawsCellsAsRectangles() {
    AttentionMapModel a, b;
    HeadSelection aSelection(&a), bSelection(&b);
    a.setTrace(fourTokenTrace(1));
    auto other = fourTokenTrace(1);
    other->trace.layers[0].heads[0].weights(1, 0) = 0.9f;  // row 1: A - B = -0.4, +0.4
    other->trace.layers[0].heads[0].weights(1, 1) = 0.1f;
    b.setTrace(other);
    AttentionDifferenceModel difference;
    difference.setRuns(&aSelection, &bSelection);
    AttentionDifferenceView view(&difference);
    view.resize(500, 420);
    QTemporaryDir dir;
    const QString file = dir.filePath("difference.svg");
    QCOMPARE(exportView(view, ExportFormat::Svg, file), QString());
    const testing::SvgContents svg = testing::readSvg(file);
    QCOMPARE(svg.error, QString());
    QCOMPARE(svg.images, 0);
    for (const char* label : {"a", "b", "c", "d"}) QVERIFY2(svg.texts.contains(label), qPrintable(svg.texts.join(" | ")));  // the token labels
    const QRect cell = view.cellRect(1, 0);
    QCOMPARE(int(svg.ofSize(cell.size()).size()), 16);
    QCOMPARE(svg.fillAt(cell.topLeft(), cell.size()), AttentionDifferenceModel::colourFor(0.5f - 0.9f, difference.maxAbsDifference()));
    const QRect masked = view.cellRect(0, 2);
    QCOMPARE(svg.fillAt(masked.topLeft(), masked.size()), render(view).pixelColor(masked.center()));  // the masked grey on screen
  }

  // SVG export of the model view: every thumbnail's cells as rectangles in the heatmap's colours.
  void theSvgModelViewDrawsCellsAsRectangles() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    ModelView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(600, 500);
    model.setTrace(fourTokenTrace(2));
    QTemporaryDir dir;
    const QString file = dir.filePath("model.svg");
    QCOMPARE(exportView(view, ExportFormat::Svg, file), QString());
    const testing::SvgContents svg = testing::readSvg(file);
    QCOMPARE(svg.error, QString());
    QCOMPARE(svg.images, 0);
    QVERIFY2(svg.texts.contains("Head 2") && svg.texts.contains("Layer 2"), qPrintable(svg.texts.join(" | ")));
    const QRectF thumb = view.thumbnailRect(1, 0);
    const QSizeF cell(thumb.width() / 4, thumb.height() / 4);
    QCOMPARE(int(svg.ofSize(cell).size()), 2 * 2 * 16);
    const QImage colours = mapImage(model, 1, 0);
    QCOMPARE(svg.fillAt(thumb.topLeft() + QPointF(0, 2 * cell.height()), cell), QColor(colours.pixel(0, 2)));  // query 2, key 0
    QCOMPARE(svg.fillAt(thumb.topLeft() + QPointF(3 * cell.width(), 0), cell), QColor(kMaskedColour));        // query 0, key 3
  }

  void rampPositionsLinearAndLog() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    QCOMPARE(model.rampPosition(0.5, 1.0), 0.5);
    QCOMPARE(model.rampPosition(0.0, 1.0), 0.0);
    model.setColourScale(AttentionMapModel::ColourScale::Log);
    QCOMPARE(model.rampPosition(1.0, 1.0), 1.0);
    QVERIFY(std::abs(model.rampPosition(0.1, 1.0) - 0.75) < 1e-12);  // one decade of four below the top
    QVERIFY(std::abs(model.rampPosition(0.01, 1.0) - 0.5) < 1e-12);
    QCOMPARE(model.rampPosition(1e-6, 1.0), 0.0);  // below the fourth decade: the bottom colour
    QCOMPARE(model.rampPosition(0.0, 1.0), 0.0);
  }

  void heatmapColoursInLinearAndLogScale() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(fourTokenTrace());
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(500, 420);
    QImage image = render(view);
    auto at = [&](int q, int k) { return image.pixel(view.cellRect(q, k).center()); };
    QCOMPARE(at(0, 0), rampColor(1.0).rgb());
    QCOMPARE(at(1, 1), rampColor(0.5).rgb());
    QCOMPARE(at(2, 0), rampColor(0.1).rgb());
    QCOMPARE(at(2, 1), rampColor(0.01).rgb());
    QCOMPARE(at(3, 0), rampColor(0.0).rgb());
    const QRgb masked = at(0, 3);  // the grey fill or its hatching, never a ramp colour
    QVERIFY(qRed(masked) == qGreen(masked) && qGreen(masked) == qBlue(masked) && qRed(masked) >= 150);

    QSignalSpy changed(&model, &AttentionMapModel::mapChanged);
    model.setColourScale(AttentionMapModel::ColourScale::Log);
    QCOMPARE(changed.count(), 1);
    image = render(view);
    QCOMPARE(at(0, 0), rampColor(1.0).rgb());
    QCOMPARE(at(2, 0), rampColor(0.75).rgb());   // 0.1: one decade down
    QCOMPARE(at(2, 1), rampColor(model.rampPosition(0.01f, 1.0)).rgb());  // 0.01: two decades (0.5 as a float allows)
    QCOMPARE(at(3, 1), rampColor(0.25).rgb());   // 0.001: three decades
    QCOMPARE(at(3, 0), rampColor(0.0).rgb());    // a real zero stays at the bottom
    QVERIFY(at(2, 1) != at(3, 1));  // told apart in log, while linear paints both almost alike
  }

  // A map with more cells than the view has pixels shows whole, block by block: each square the
  // largest weight of its block, so one sharp cell among faint ones stays visible; a new trace
  // is drawn anew.
  void aMapLargerThanTheViewShowsWholeInBlocks() {
    const int n = 600;
    auto snapshot = std::make_shared<TraceSnapshot>();
    HeadTrace head;
    head.weights = Mat::Zero(n, n);
    head.scores = Mat::Zero(n, n);
    for (int q = 0; q < n; ++q) {
      snapshot->trace.tokens.push_back(q % 5);
      snapshot->trace.labels.push_back(std::string(1, char('a' + q % 5)));
      for (int k = 0; k < n; ++k) k <= q ? head.weights(q, k) = 1.0f / (q + 1) : head.scores(q, k) = kMasked;
    }
    head.weights(401, 3) = 1.0f;  // the sharp cell
    snapshot->vocabulary = std::make_shared<Vocabulary>(std::vector<std::string>{"a", "b", "c", "d", "e"}, Vocabulary::Level::Word);
    snapshot->maxProbeLength = n;
    snapshot->trace.layers.push_back({"softmax", {head}, {}});
    AttentionMapModel model;
    HeadSelection selection(&model);
    model.setTrace(snapshot);
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(500, 420);
    QImage image = render(view);
    QVERIFY(view.rect().contains(view.cellRect(n - 1, n - 1)));  // the last query and key are on screen
    QCOMPARE(view.cellRect(401, 3), view.cellRect(400, 2));       // two cells per square's side here
    QVERIFY(view.cellRect(401, 3) != view.cellRect(401, 4));
    auto at = [&](int q, int k) { return image.pixel(view.cellRect(q, k).center()); };
    QCOMPARE(at(401, 3), rampColor(1.0).rgb());
    QCOMPARE(at(401, 5), rampColor(1.0 / 401).rgb());  // its neighbour: the faint rows' largest weight (row 400's)
    const QRgb masked = at(0, n - 1);
    QVERIFY(qRed(masked) == qGreen(masked) && qGreen(masked) == qBlue(masked) && qRed(masked) >= 150);

    auto moved = std::make_shared<TraceSnapshot>(*snapshot);  // the sharp cell elsewhere
    moved->trace.layers[0].heads[0].weights(401, 3) = 1.0f / 402;
    moved->trace.layers[0].heads[0].weights(501, 3) = 1.0f;
    model.setTrace(moved);
    image = render(view);
    QCOMPARE(at(501, 3), rampColor(1.0).rgb());
    QCOMPARE(at(401, 3), rampColor(1.0 / 401).rgb());  // no longer sharp: row 400's weight is the block's largest

    // The difference of the two shows whole too, each square its block's largest difference.
    AttentionMapModel first;
    HeadSelection firstSelection(&first);
    first.setTrace(snapshot);
    AttentionDifferenceModel difference;
    difference.setRuns(&firstSelection, &selection);
    AttentionDifferenceView differenceView(&difference);
    differenceView.resize(500, 420);
    const QImage drawn = render(differenceView);
    QVERIFY(differenceView.rect().contains(differenceView.cellRect(n - 1, n - 1)));
    QCOMPARE(differenceView.cellRect(401, 3), differenceView.cellRect(400, 2));
    const double top = difference.maxAbsDifference();
    QCOMPARE(drawn.pixelColor(differenceView.cellRect(401, 3).center()), AttentionDifferenceModel::colourFor(1.0f - 1.0f / 402, top));
    QCOMPARE(drawn.pixelColor(differenceView.cellRect(501, 3).center()), AttentionDifferenceModel::colourFor(1.0f / 502 - 1.0f, top));
  }

  // Presenter mode writes each weight in its cell: readable without a hover, and drawn.
  void heatmapWritesWeightsWhenAsked() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(fourTokenTrace());
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(500, 420);
    QCOMPARE(view.cellText(1, 1), QString());  // off by default: hover only
    const QImage plain = render(view);
    view.setValuesShown(true);
    QCOMPARE(view.cellText(1, 1), QStringLiteral(".50"));
    QCOMPARE(view.cellText(0, 0), QStringLiteral("1.00"));
    QCOMPARE(view.cellText(0, 3), QString());  // masked: nothing to read
    QCOMPARE(view.cellText(3, 1), QString());  // 0.001 rounds to nothing: left blank
    const QImage written = render(view);
    const QRect cell = view.cellRect(1, 1);
    int changed = 0;
    for (int y = cell.top(); y <= cell.bottom(); ++y)
      for (int x = cell.left(); x <= cell.right(); ++x) changed += plain.pixel(x, y) != written.pixel(x, y);
    QVERIFY(changed > 5);  // the text is drawn in the cell
    view.resize(60, 60);  // cells too small for the text: none written
    QCOMPARE(view.cellText(1, 1), QString());
  }

  void evictedCellsCarryTheMarker() {
    auto snapshot = fourTokenTrace(1);
    // a KV-cache generation over these four tokens that evicted key 1 of head 1 at step 2, so
    // query 3 no longer saw it
    auto kv = std::make_shared<KvCacheResult>();
    OccupancyRecord& r = kv->record;
    r.steps = r.promptLength = 4;
    r.layers = 1;
    r.kvHeads = 2;
    r.cachesLayer = {1};
    kv->modelStep = snapshot->step;
    OccupancyRun run;
    run.spec.policy = "window";
    run.budget = "2 per head";
    run.tokens = snapshot->trace.tokens;
    run.heads.assign(2, HeadRaster{std::vector<CellState>(16, CellState::Live), std::vector<uint8_t>(16, 0), {}});
    run.heads[0].cells[r.cell(2, 1)] = CellState::EvictedNow;
    r.runs.push_back(run);
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(snapshot);
    model.setEvictions(kv, 0);
    QVERIFY(modelSelection.shown().isEvicted(3, 1));
    QVERIFY(!modelSelection.shown().isEvicted(3, 2));
    QVERIFY(!model.isEvicted(0, 1, 3, 1));  // another head
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(500, 420);
    const QImage image = render(view);
    auto reddish = [&](const QRect& cell) {
      int count = 0;
      for (int y = cell.top(); y <= cell.bottom(); ++y)
        for (int x = cell.left(); x <= cell.right(); ++x) {
          const QColor c = image.pixel(x, y);
          count += c.red() > 180 && c.green() < 120 && c.blue() < 120;
        }
      return count;
    };
    QVERIFY(reddish(view.cellRect(3, 1)) > 10);
    QCOMPARE(reddish(view.cellRect(3, 2)), 0);
  }

  void modelViewThumbnailsAndClickSelection() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    ModelView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(600, 500);
    QVERIFY(view.thumbnailRect(0, 0).isEmpty());
    model.setTrace(fourTokenTrace(2));
    // The thumbnail model: one pixel per cell, the heatmap's colours.
    const QImage thumb = mapImage(model, 1, 1);
    QCOMPARE(thumb.size(), QSize(4, 4));
    QCOMPARE(thumb.pixel(0, 2), rampColor(0.0).rgb());
    QCOMPARE(thumb.pixel(1, 2), rampColor(1.0).rgb());
    QCOMPARE(thumb.pixel(3, 0), kMaskedColour);
    QVERIFY(mapImage(model, 2, 0).isNull());

    // Four thumbnails in a 2 x 2 grid, apart from each other, drawn with those colours.
    const QRect a = view.thumbnailRect(0, 0), b = view.thumbnailRect(0, 1), c = view.thumbnailRect(1, 0);
    QVERIFY(!a.isEmpty() && !a.intersects(b) && !a.intersects(c));
    QVERIFY(b.left() > a.right() && c.top() > a.bottom());
    const QImage image = render(view);
    const QRect r = view.thumbnailRect(1, 1);
    const int cell = r.width() / 4;
    QCOMPARE(image.pixel(r.left() + cell / 2 + cell, r.top() + cell / 2 + 2 * cell), rampColor(1.0).rgb());  // (q2, k1)
    QCOMPARE(image.pixel(r.left() + cell / 2, r.top() + cell / 2 + 2 * cell), rampColor(0.0).rgb());         // (q2, k0)

    QTest::mouseClick(&view, Qt::LeftButton, {}, view.thumbnailRect(1, 0).center());
    QCOMPARE(modelSelection.layer(), 1);
    QCOMPARE(modelSelection.head(), 0);
    QCOMPARE(view.headAt(view.thumbnailRect(0, 1).center()), std::make_pair(0, 1));
    QCOMPARE(view.headAt(QPoint(0, 0)), std::make_pair(-1, -1));
  }

  void headViewLinesAboveTheThreshold() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(fourTokenTrace(1));
    // Head 0 at 0.05: (0,0) 1, (1,0) .5, (1,1) .5, (2,0) .1, (2,2) .89, (3,2) .2, (3,3) .799.
    auto lines = attentionLines(model, 0, {0}, 0.05f);
    QCOMPARE(lines.size(), size_t(7));
    float total = 0;
    for (const AttentionLine& l : lines) {
      QVERIFY(l.weight >= 0.05f && l.key <= l.query && l.head == 0);
      total += l.weight;
    }
    QVERIFY(std::abs(total - (1 + 0.5 + 0.5 + 0.1 + 0.89 + 0.2 + 0.799)) < 1e-5);
    QCOMPARE(attentionLines(model, 0, {0}, 0.005f).size(), size_t(8));  // now 0.01 too
    QCOMPARE(attentionLines(model, 0, {0}, 0.05f, 3).size(), size_t(2));  // query 3 only
    QCOMPARE(attentionLines(model, 0, {0}, 0.05f, -1, 0).size(), size_t(3));  // key 0 only
    const auto strongest = attentionLines(model, 0, {0}, 0.0f, -1, -1, 1);  // the top key of each query
    QCOMPARE(strongest.size(), size_t(4));
    QCOMPARE(strongest[2].key, 2);  // row 2: 0.89 on key 2
    QCOMPARE(strongest[3].key, 3);  // row 3: 0.799 on key 3
    // Two heads: head 1 adds its four weight-1 lines (row 0 -> 0, then i -> i-1).
    lines = attentionLines(model, 0, {0, 1}, 0.05f);
    QCOMPARE(lines.size(), size_t(11));
    QCOMPARE(lines.back().head, 1);
    QCOMPARE(lines.back().query, 3);
    QCOMPARE(lines.back().key, 2);
    QVERIFY(attentionLines(model, 0, {5}, 0.0f).empty());  // no such head

    HeadView view(ViewContext{.attention = &model, .selection = &modelSelection});
    view.resize(700, 500);
    QCOMPARE(view.canvas()->heads(), std::vector<int>{0});  // the selected head
    modelSelection.select(0, 1);
    QCOMPARE(view.canvas()->heads(), (std::vector<int>{0, 1}));  // a head picked elsewhere joins
    const QImage image = render(*view.canvas());
    // A weight-1 line of head 1 (colour of head 1) runs from query 3 to key 2: its midpoint is coloured.
    const QPoint from = view.canvas()->tokenAnchor(3, false), to = view.canvas()->tokenAnchor(2, true);
    QVERIFY(from.x() < to.x());
    int coloured = 0;
    for (int x = from.x() + 40; x < to.x() - 40; x += 7) {
      const double t = double(x - from.x()) / (to.x() - from.x());
      const QColor c = image.pixel(x, int(from.y() + t * (to.y() - from.y())));
      coloured += c.saturation() > 60;
    }
    QVERIFY2(coloured > 3, qPrintable(QString::number(coloured)));
  }

  void probeEditorTokenisesOrExplains() {
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    ProbeEditor editor(&model);
    QVERIFY(!editor.field()->isEnabled());
    QVERIFY(!editor.submit(QStringLiteral("a b")).isEmpty());  // no vocabulary before training
    model.setTrace(fourTokenTrace(1));
    QVERIFY(editor.field()->isEnabled());
    QCOMPARE(editor.field()->text(), QStringLiteral("a b c d"));  // the traced probe, decoded
    QSignalSpy edited(&editor, &ProbeEditor::probeEdited);
    QCOMPARE(editor.submit(QStringLiteral("e d  a")), QString());
    QCOMPARE(edited.count(), 1);
    QCOMPARE(edited.first().first().value<std::vector<int>>(), (std::vector<int>{4, 3, 0}));
    const QString unknown = editor.submit(QStringLiteral("a zebra"));
    QVERIFY2(unknown.contains(QStringLiteral("zebra")) && unknown.contains(QStringLiteral("position 1")), qPrintable(unknown));
    QVERIFY(editor.submit(QStringLiteral("a a a a a a a")).contains(QStringLiteral("context")));  // 7 > 6
    QVERIFY(!editor.submit(QStringLiteral("   ")).isEmpty());
    QCOMPARE(edited.count(), 1);  // none of the refused texts was sent
    QTest::keyClicks(editor.field(), QStringLiteral(" zebra"));  // typed: refused with a message
    QVERIFY(editor.message().contains(QStringLiteral("zebra")));
    model.setTrace(fourTokenTrace(1));
    QVERIFY(editor.field()->text().endsWith(QStringLiteral(" zebra")));  // what the user typed is never overwritten
  }

  void trainingChartsAndTheirCsv() {
    LossHistoryModel history;
    TrainingView view(ViewContext{.history = &history});
    view.resize(900, 600);
    QVERIFY(!view.hasExportData());
    std::vector<LossPoint> points;
    for (int s = 1; s <= 20; ++s) {
      LossPoint p;
      p.step = s;
      p.loss = 3.0 - 0.1 * s;
      if (s % 10 == 0) {
        p.val_loss = 2.5 - 0.05 * s;
        p.accuracy = 0.04 * s;
      }
      p.lr = 1e-3;
      p.grad_norm = 2;
      p.layer_grad_norm = {1, s * 0.5};
      p.layer_entropy = {2.0, 1.0};
      points.push_back(p);
    }
    history.append(points);
    const auto& charts = view.charts();
    QCOMPARE(charts.size(), size_t(5));
    QCOMPARE(charts[0]->seriesCount(), 2);
    QCOMPARE(charts[3]->seriesCount(), 2);  // one series per layer
    const QString near = charts[0]->valuesNear(9.2);
    QVERIFY2(near.contains(QStringLiteral("step 9")) && near.contains(QStringLiteral("training loss: 2.1")), qPrintable(near));
    QVERIFY2(near.contains(QStringLiteral("step 10")) && near.contains(QStringLiteral("validation loss: 2")), qPrintable(near));
    QVERIFY2(charts[3]->valuesNear(14).contains(QStringLiteral("layer 2: 7")), qPrintable(charts[3]->valuesNear(14)));

    QString csv;
    QTextStream out(&csv);
    view.writeCsv(out);
    const QStringList lines = csv.trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 21);
    QCOMPARE(lines[0], QStringLiteral("step,loss,val_loss,accuracy,lr,grad_norm,grad_norm_layer1,grad_norm_layer2,entropy_layer1,entropy_layer2"));
    QCOMPARE(lines[10], QStringLiteral("10,2,2,0.4,0.001,2,1,5,2,1"));
    QCOMPARE(lines[1].split(QLatin1Char(',')).at(2), QString());  // no validation on step 1
  }

  void exportsWriteValidFiles() {
    QTemporaryDir dir;
    AttentionMapModel model;
    HeadSelection modelSelection(&model);
    model.setTrace(fourTokenTrace(2));
    AttentionHeatmapView heatmap(ViewContext{.attention = &model, .selection = &modelSelection});
    ModelView grid(ViewContext{.attention = &model, .selection = &modelSelection});
    HeadView lines(ViewContext{.attention = &model, .selection = &modelSelection});
    for (QWidget* w : std::initializer_list<QWidget*>{&heatmap, &grid, &lines}) w->resize(640, 480);
    QCOMPARE(csvField(QStringLiteral("a,b")), QStringLiteral("\"a,b\""));
    QCOMPARE(csvField(QStringLiteral("say \"hi\"")), QStringLiteral("\"say \"\"hi\"\"\""));

    int index = 0;
    for (ExportableView* view : std::initializer_list<ExportableView*>{&heatmap, &grid, &lines}) {
      const QString stem = dir.filePath(QString::number(index++));
      QCOMPARE(exportView(*view, ExportFormat::Png, stem + ".png"), QString());
      const QImage png(stem + ".png");
      QVERIFY(!png.isNull());
      QCOMPARE(png.size(), view->exportWidget()->size() * view->exportWidget()->devicePixelRatio());
      QCOMPARE(exportView(*view, ExportFormat::Svg, stem + ".svg"), QString());
      QVERIFY(readAll(stem + ".svg").contains(QStringLiteral("<svg")));
      QSvgRenderer svg(stem + ".svg");
      QVERIFY(svg.isValid());
      QCOMPARE(exportView(*view, ExportFormat::Csv, stem + ".csv"), QString());
      QVERIFY(readAll(stem + ".csv").count(QLatin1Char('\n')) >= 5);
    }
    const QStringList heat = readAll(dir.filePath("0.csv")).trimmed().split(QLatin1Char('\n'));
    QCOMPARE(heat.size(), 1 + 16);
    QCOMPARE(heat[0], QStringLiteral("query,key,query_token,key_token,weight,score,masked,evicted"));
    QCOMPARE(heat[1 + 2 * 4 + 1], QStringLiteral("2,1,c,b,0.01,-1.5,0,0"));
    QCOMPARE(heat[1 + 0 * 4 + 3], QStringLiteral("0,3,a,d,0,,1,0"));  // masked: no score
    QCOMPARE(readAll(dir.filePath("1.csv")).trimmed().split(QLatin1Char('\n')).size(), 1 + 2 * 2 * 16);
    QCOMPARE(readAll(dir.filePath("2.csv")).trimmed().split(QLatin1Char('\n')).size(), 1 + 7);  // head 1, lines >= 0.02

    // Nothing to export yet: a clear reason, no file.
    AttentionMapModel empty;
    HeadSelection emptySelection(&empty);
    AttentionHeatmapView blank(ViewContext{.attention = &empty, .selection = &emptySelection});
    QVERIFY(!exportView(blank, ExportFormat::Csv, dir.filePath("none.csv")).isEmpty());
    QVERIFY(!QFile::exists(dir.filePath("none.csv")));
    QVERIFY(!exportView(heatmap, ExportFormat::Png, dir.filePath("no/such/folder/x.png")).isEmpty());
  }

  void probeEditsAreTracedByTheWorker() {
    TrainingSession session;
    std::shared_ptr<const TraceSnapshot> last;
    connect(&session, &TrainingSession::traced, [&](const auto& trace) { last = trace; });
    session.setPauseAtStep(3);
    session.start(tinyConfig(6));
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Paused, 300000);
    QTRY_VERIFY_WITH_TIMEOUT(last && last->step == 3, 10000);
    QVERIFY(last->vocabulary && last->vocabulary->size() > 3);
    QCOMPARE(last->maxProbeLength, 24);
    const std::vector<int> original = last->trace.tokens;

    session.setProbe({1, 2, 3});  // paused: traced at once, still at step 3
    QTRY_VERIFY_WITH_TIMEOUT(last->trace.tokens == (std::vector<int>{1, 2, 3}), 10000);
    QCOMPARE(last->step, 3);
    QCOMPARE(last->trace.layers.at(0).heads.at(0).weights.rows(), 3);
    session.drawProbe();
    QTRY_VERIFY_WITH_TIMEOUT(last->trace.tokens != (std::vector<int>{1, 2, 3}), 10000);
    QVERIFY(!last->trace.tokens.empty() && last->trace.tokens != original);  // a fresh example, not the fixed one

    session.resume();
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Finished, 300000);
    QTRY_COMPARE_WITH_TIMEOUT(last->step, 6, 10000);
    session.setProbe({4, 4});  // finished: the worker still traces
    QTRY_VERIFY_WITH_TIMEOUT(last->trace.tokens == (std::vector<int>{4, 4}), 10000);
    QCOMPARE(session.state(), TrainingSession::State::Finished);
    session.setProbe({1000000});  // not in the vocabulary: ignored, no crash
    QTest::qWait(200);
    QVERIFY(last->trace.tokens == (std::vector<int>{4, 4}));
    session.reset();
    QCOMPARE(session.state(), TrainingSession::State::Idle);
  }
};

QTEST_MAIN(AttentionViewsTest)
#include "test_attention_views.moc"
