// Exported pictures hold what the views show, cell by cell: for a trace whose maps are known, the
// exported PNG's pixel at the centre of each cell, and the fill of the exported SVG's rectangle
// under that centre, are the colour the view's scale gives that cell's weight (rows are queries,
// columns keys), in linear and log scale; the SVG's token labels are text at their rows. The model
// view's thumbnails are checked the same way in its PNG and in the bitmaps its SVG embeds.
// Every head's map differs from its transpose and from the other heads', so an export that swaps
// rows and columns, shows another head or recolours fails.
#include <QApplication>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTransform>
#include <QXmlStreamReader>
#include <QtTest>

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "colormap.h"
#include "head_selection.h"
#include "map_image.h"
#include "model_view.h"
#include "view_export.h"

using namespace attnlab;

namespace {

constexpr int kTokens = 4;
using Map = std::array<std::array<float, kTokens>, kTokens>;  // [query][key]; 0 above the diagonal is masked

// Causal maps, each row summing to 1, no two heads alike. Layer 0: A, B; layer 1: C, A.
constexpr Map kA = {{{1, 0, 0, 0}, {0.3f, 0.7f, 0, 0}, {0.1f, 0.25f, 0.65f, 0}, {0.002f, 0.15f, 0.35f, 0.498f}}};
constexpr Map kB = {{{1, 0, 0, 0}, {0.9f, 0.1f, 0, 0}, {0.02f, 0.95f, 0.03f, 0}, {0.01f, 0.04f, 0.9f, 0.05f}}};
constexpr Map kC = {{{1, 0, 0, 0}, {0.6f, 0.4f, 0, 0}, {0.5f, 0.3f, 0.2f, 0}, {0.4f, 0.3f, 0.2f, 0.1f}}};
const Map* const kHeads[2][2] = {{&kA, &kB}, {&kC, &kA}};

bool masked(int query, int key) { return key > query; }

HeadTrace headTrace(const Map& map) {
  HeadTrace h;
  h.weights.resize(kTokens, kTokens);
  h.scores = Mat::Zero(kTokens, kTokens);
  for (int q = 0; q < kTokens; ++q)
    for (int k = 0; k < kTokens; ++k) {
      h.weights(q, k) = map[q][k];
      if (masked(q, k)) h.scores(q, k) = -std::numeric_limits<float>::infinity();
    }
  return h;
}

std::shared_ptr<TraceSnapshot> knownTrace() {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->step = 7;
  snapshot->trace.tokens = {0, 1, 2, 3};
  snapshot->trace.labels = {"red", "fox", "ran", "far"};
  snapshot->vocabulary = std::make_shared<Vocabulary>(std::vector<std::string>{"red", "fox", "ran", "far"}, Vocabulary::Level::Word);
  snapshot->maxProbeLength = 6;
  for (const auto& layer : kHeads) snapshot->trace.layers.push_back({"softmax", {headTrace(*layer[0]), headTrace(*layer[1])}, {}});
  return snapshot;
}

// The colour the view's scale gives a cell: the ramp at the weight's position below `top`, or the
// masked grey. Computed from the known map, not from anything the view drew.
QColor expectedColour(const AttentionMapModel& model, const Map& map, int q, int k, double top) {
  return masked(q, k) ? QColor(kMaskedColour) : rampColor(model.rampPosition(map[q][k], top));
}

bool near(const QColor& a, const QColor& b) {
  constexpr int kTolerance = 2;  // PNG is lossless and the cells are flat: only rounding may differ
  return std::abs(a.red() - b.red()) <= kTolerance && std::abs(a.green() - b.green()) <= kTolerance &&
         std::abs(a.blue() - b.blue()) <= kTolerance;
}

QByteArray describe(const char* what, int q, int k, const QColor& got, const QColor& want) {
  return QStringLiteral("%1 cell (query %2, key %3): %4, the scale gives %5")
      .arg(QLatin1String(what)).arg(q).arg(k).arg(got.name(), want.name()).toUtf8();
}

// The exported PNG's pixel at a widget point (the PNG is in device pixels).
QColor pngPixel(const QImage& png, const QWidget& widget, QPointF point) {
  return png.pixelColor((point * widget.devicePixelRatio()).toPoint());
}

QPointF centre(const QRect& r) { return QPointF(r.x() + r.width() / 2.0, r.y() + r.height() / 2.0); }

// What an SVG draws, in the file's coordinates: its filled rectangles in document order (so the
// last one under a point is the one seen) and its text elements.
struct SvgContent {
  struct Rect {
    QRectF area;
    QColor fill;
  };
  struct Text {
    QPointF at;
    QString text;
  };
  struct Image {
    QRectF area;
    QImage image;
  };
  std::vector<Rect> rects;
  std::vector<Text> texts;
  std::vector<Image> images;  // embedded bitmaps (data: URLs), decoded
};

// "matrix(a,b,c,d,e,f)", the only transform QSvgGenerator writes; identity otherwise.
QTransform parseTransform(QStringView value) {
  if (!value.startsWith(u"matrix(")) return {};
  const QStringList n = value.mid(7, value.size() - 8).toString().split(QLatin1Char(','));
  if (n.size() != 6) return {};
  return QTransform(n[0].toDouble(), n[1].toDouble(), n[2].toDouble(), n[3].toDouble(), n[4].toDouble(), n[5].toDouble());
}

SvgContent readSvg(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file));
  QXmlStreamReader xml(&f);
  struct Inherited {
    QTransform transform;
    QString fill;
  };
  std::vector<Inherited> stack{{QTransform(), QStringLiteral("black")}};
  SvgContent content;
  while (!xml.atEnd()) {
    const auto token = xml.readNext();
    if (token == QXmlStreamReader::EndElement) {
      stack.pop_back();
      continue;
    }
    if (token != QXmlStreamReader::StartElement) continue;
    const QXmlStreamAttributes a = xml.attributes();
    Inherited here = stack.back();
    if (a.hasAttribute(QLatin1String("transform"))) here.transform = parseTransform(a.value(QLatin1String("transform"))) * here.transform;
    if (a.hasAttribute(QLatin1String("fill"))) here.fill = a.value(QLatin1String("fill")).toString();
    const auto number = [&a](const char* name) { return a.value(QLatin1String(name)).toDouble(); };
    if (xml.name() == u"rect" && here.fill != u"none") {
      const QRectF r(number("x"), number("y"), number("width"), number("height"));
      content.rects.push_back({here.transform.mapRect(r), QColor(here.fill)});
    }
    if (xml.name() == u"image") {
      const QRectF r(number("x"), number("y"), number("width"), number("height"));
      const QString href = a.value(QLatin1String("xlink:href")).toString();
      const qsizetype comma = href.indexOf(QLatin1Char(','));
      QImage image;
      if (href.startsWith(QLatin1String("data:image/")) && comma > 0) image.loadFromData(QByteArray::fromBase64(href.mid(comma + 1).toLatin1()));
      content.images.push_back({here.transform.mapRect(r), image});
    }
    if (xml.name() == u"text") {
      const QPointF at = here.transform.map(QPointF(number("x"), number("y")));
      content.texts.push_back({at, xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed()});
      continue;  // readElementText consumed the end element: nothing was pushed
    }
    stack.push_back(here);
  }
  if (xml.hasError()) qFatal("%s is not well-formed XML: %s", qPrintable(file), qPrintable(xml.errorString()));
  return content;
}

// The topmost filled rectangle under `point`, or null.
const SvgContent::Rect* rectAt(const SvgContent& svg, QPointF point) {
  for (auto it = svg.rects.rbegin(); it != svg.rects.rend(); ++it)
    if (it->area.contains(point)) return &*it;
  return nullptr;
}

}  // namespace

class ExportedPicturesTest : public QObject {
  Q_OBJECT
 private slots:
  // Layer 2, head 1 (map C) selected, so an export of the first head would fail too.
  void theHeatmapPngHasEachCellsColour() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    model.setTrace(knownTrace());
    selection.select(1, 0);
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(520, 440);
    QTemporaryDir dir;
    for (const auto scale : {AttentionMapModel::ColourScale::Linear, AttentionMapModel::ColourScale::Log}) {
      model.setColourScale(scale);
      const QString file = dir.filePath(QStringLiteral("heatmap.png"));
      QCOMPARE(exportView(view, ExportFormat::Png, file), QString());
      const QImage png(file);
      QVERIFY(!png.isNull());
      for (int q = 0; q < kTokens; ++q)
        for (int k = 0; k < kTokens; ++k) {
          const QColor got = pngPixel(png, view, centre(view.cellRect(q, k)));
          const QColor want = expectedColour(model, kC, q, k, 1.0);  // C's largest weight is 1
          QVERIFY2(near(got, want), describe("PNG", q, k, got, want).constData());
        }
    }
    // The two scales colour C's 0.1 differently, so one scale's colours in both files would fail.
    QVERIFY(!near(expectedColour(model, kC, 3, 3, 1.0), rampColor(0.1)));
  }

  void theHeatmapSvgFillsEachCellAndWritesLabelsAsText() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    model.setTrace(knownTrace());
    selection.select(0, 1);  // map B
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(520, 440);
    QTemporaryDir dir;
    for (const auto scale : {AttentionMapModel::ColourScale::Linear, AttentionMapModel::ColourScale::Log}) {
      model.setColourScale(scale);
      const QString file = dir.filePath(QStringLiteral("heatmap.svg"));
      QCOMPARE(exportView(view, ExportFormat::Svg, file), QString());
      const SvgContent svg = readSvg(file);
      for (int q = 0; q < kTokens; ++q)
        for (int k = 0; k < kTokens; ++k) {
          const QRect cell = view.cellRect(q, k);
          const SvgContent::Rect* shape = rectAt(svg, centre(cell));
          QVERIFY2(shape, qPrintable(QStringLiteral("no rectangle under cell (%1, %2)").arg(q).arg(k)));
          QCOMPARE(shape->area.size(), QSizeF(cell.size()));  // one vector rectangle per cell
          const QColor want = expectedColour(model, kB, q, k, 1.0);
          QVERIFY2(near(shape->fill, want), describe("SVG", q, k, shape->fill, want).constData());
        }
    }
    // Each token's label is a text element, twice (its row and its column); one of them is at
    // its row, left of the grid.
    const SvgContent svg = readSvg(dir.filePath(QStringLiteral("heatmap.svg")));
    for (int i = 0; i < kTokens; ++i) {
      const QString label = model.tokenLabel(i);
      QVERIFY(!label.isEmpty());
      int found = 0, atRow = 0;
      for (const auto& t : svg.texts) {
        if (t.text != label) continue;
        ++found;
        const QRect row = view.cellRect(i, 0);
        atRow += t.at.x() < row.left() && t.at.y() >= row.top() && t.at.y() <= row.bottom() + 1;
      }
      QVERIFY2(found >= 2, qPrintable(QStringLiteral("label %1 is not written as text twice").arg(label)));
      QVERIFY2(atRow == 1, qPrintable(QStringLiteral("label %1 is not at row %2").arg(label).arg(i)));
    }
  }

  // The model view's thumbnails: every head's every cell, each in its own place in the grid.
  void theModelViewPngHasEveryHeadsCells() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    model.setTrace(knownTrace());
    ModelView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(600, 500);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("model.png"));
    QCOMPARE(exportView(view, ExportFormat::Png, file), QString());
    const QImage png(file);
    QVERIFY(!png.isNull());
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        const QRect r = view.thumbnailRect(l, h);
        QVERIFY(r.width() >= 4 * 4);  // cells of a few pixels at least, so a centre is inside one
        const double cell = r.width() / double(kTokens);
        for (int q = 0; q < kTokens; ++q)
          for (int k = 0; k < kTokens; ++k) {
            const QPointF at(r.x() + (k + 0.5) * cell, r.y() + (q + 0.5) * cell);
            const QColor got = pngPixel(png, view, at);
            const QColor want = expectedColour(model, *kHeads[l][h], q, k, 1.0);
            QVERIFY2(near(got, want), describe(qPrintable(QStringLiteral("layer %1 head %2").arg(l + 1).arg(h + 1)), q, k, got, want).constData());
          }
      }
  }

  // The model view's SVG draws every thumbnail cell as its own rectangle, in its place in the grid,
  // in the scale's colour, and embeds no bitmap.
  void theModelViewSvgFillsEveryHeadsCells() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    model.setTrace(knownTrace());
    ModelView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(600, 500);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("model.svg"));
    QCOMPARE(exportView(view, ExportFormat::Svg, file), QString());
    const SvgContent svg = readSvg(file);
    QVERIFY2(svg.images.empty(), qPrintable(QStringLiteral("%1 embedded bitmaps").arg(svg.images.size())));
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        const QRectF place(view.thumbnailRect(l, h));
        const double cell = place.width() / kTokens;
        for (int q = 0; q < kTokens; ++q)
          for (int k = 0; k < kTokens; ++k) {
            const QPointF at(place.x() + (k + 0.5) * cell, place.y() + (q + 0.5) * cell);
            const SvgContent::Rect* shape = rectAt(svg, at);
            const QString where = QStringLiteral("SVG layer %1 head %2").arg(l + 1).arg(h + 1);
            QVERIFY2(shape, qPrintable(where + QStringLiteral(": no rectangle under cell (%1, %2)").arg(q).arg(k)));
            QVERIFY2(shape->area.width() <= cell + 1 && shape->area.height() <= cell + 1, qPrintable(where + ": not one cell"));
            const QColor want = expectedColour(model, *kHeads[l][h], q, k, 1.0);
            QVERIFY2(near(shape->fill, want), describe(qPrintable(where), q, k, shape->fill, want).constData());
          }
      }
  }
};

QTEST_MAIN(ExportedPicturesTest)
#include "test_exported_pictures.moc"
