#include "attention_heatmap_view.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QImage>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QTextStream>
#include <QRegularExpression>
#include <QToolTip>
#include <utility>
#include <vector>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "head_selection.h"
#include "map_image.h"
#include "shared_colour_scale.h"
#include "grid_labels.h"
#include "colormap.h"

namespace attnlab {

namespace {

constexpr int kMargin = 6;
constexpr int kGap = 4;           // between labels and grid
constexpr int kLegendGap = 12;    // between grid and colour bar
constexpr int kBarWidth = 14;
constexpr int kTick = 4;  // legend tick length
constexpr int kMaxLabelChars = 8;  // longer token labels are elided

const QColor kMaskedFill(226, 226, 226);
const QColor kMaskedHatch(160, 160, 160);
const QColor kEvictedMark(230, 40, 40);  // red: on no part of the weight ramp

// Diagonal hatching over each of `rects`, drawn as lines (not a pattern brush) so SVG exports show
// it too: lines of slope -1 (bottom-left to top-right) at x + y = c for every multiple c of the
// spacing, each cut to its rectangle here, so neighbouring rectangles continue one pattern.
// (Clipping the painter to a region of a 128-token map's 127 masked runs instead took ~10 ms of
// each redraw in Qt's raster engine; these ~8,000 short lines take well under 1 ms.)
void hatch(QPainter& painter, const QVector<QRect>& rects) {
  constexpr int kHatchSpacing = 6;
  QVector<QLine> lines;
  for (const QRect& r : rects) {
    const int first = r.left() + r.top(), last = r.right() + r.bottom();
    for (int c = first + (kHatchSpacing - first % kHatchSpacing) % kHatchSpacing; c <= last; c += kHatchSpacing) {
      const int x0 = std::max(r.left(), c - r.bottom()), x1 = std::min(r.right(), c - r.top());
      lines.append(QLine(x0, c - x0, x1, c - x1));
    }
  }
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing, false);
  painter.setPen(QPen(kMaskedHatch, 1));
  painter.drawLines(lines);
  painter.restore();
}

void fillMasked(QPainter& painter, const QRect& rect) {
  painter.fillRect(rect, kMaskedFill);
  hatch(painter, {rect});
}

QString formatWeight(double w) { return QString::number(w, 'g', 3); }

// A red cross over the cell: the KV-cache policy dropped this key for this query.
void markEvicted(QPainter& painter, const QRect& cell) {
  painter.save();
  QPen pen(kEvictedMark);
  pen.setWidthF(std::max(1.5, cell.width() / 8.0));
  painter.setPen(pen);
  painter.setRenderHint(QPainter::Antialiasing);
  const QRectF r = QRectF(cell).adjusted(cell.width() * 0.2, cell.height() * 0.2, -cell.width() * 0.2, -cell.height() * 0.2);
  painter.drawLine(r.topLeft(), r.bottomRight());
  painter.drawLine(r.topRight(), r.bottomLeft());
  painter.restore();
}

}  // namespace

AttentionHeatmapView::AttentionHeatmapView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), model_(context.attention), selection_(context.selection), colourScale_(context.colourScale) {
  if (colourScale_) connect(colourScale_, &SharedColourScale::changed, this, qOverload<>(&QWidget::update));
  connect(model_, &AttentionMapModel::mapChanged, this, [this] {
    cellsKey_ = {};  // a new trace may sit where a freed one did
    update();
  });
  connect(selection_, &HeadSelection::headChanged, this, qOverload<>(&QWidget::update));
  connect(selection_, &HeadSelection::queryChanged, this, qOverload<>(&QWidget::update));
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QSize AttentionHeatmapView::sizeHint() const { return {560, 520}; }
QSize AttentionHeatmapView::minimumSizeHint() const { return {240, 220}; }

QFont AttentionHeatmapView::labelFont() const {
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 0.85);
  return f;
}

AttentionHeatmapView::Geometry AttentionHeatmapView::geometry() const {
  Geometry g;
  const int n = shown().size();
  if (n == 0) return g;
  const QFontMetrics fm(labelFont());

  g.labelWidth = labelBandWidth(fm, n, [this](int i) { return model_->tokenLabel(i); }, kMaxLabelChars);
  // The top band also holds the "masked" swatch above the legend: two text lines at least.
  // A title line (what is shown, so exported pictures explain themselves), then the top band.
  const int top = kMargin + QFontMetrics(font()).height() + kGap + std::max(g.labelWidth, 2 * fm.height()) + kGap;
  const int left = kMargin + g.labelWidth + kGap;
  const int legendWidth =
      kLegendGap + std::max(kBarWidth + kTick + 3 * kGap + fm.horizontalAdvance(QStringLiteral("≤0.0001")) + fm.height(),
                            kBarWidth + kGap + fm.horizontalAdvance(tr("masked")));

  const int side = std::max(1, std::min(width() - left - legendWidth - kMargin, height() - top - kMargin));
  // A map with more cells than pixels of room is drawn block by block (each square the block's
  // largest weight) so that all of it shows.
  g.block = cellsPerSquare(n, side);
  g.squares = (n + g.block - 1) / g.block;
  g.cell = std::max(1, side / g.squares);
  // Whole cells leave some width over: centre labels, grid and legend as one block.
  const int spare = std::max(0, width() - left - legendWidth - kMargin - g.cell * g.squares);
  g.labelLeft = kMargin + spare / 2;
  g.grid = QRect(left + spare / 2, top, g.cell * g.squares, g.cell * g.squares);
  g.labelEvery = labelStride(fm, g.cell);
  g.legendBar = QRect(g.grid.right() + 1 + kLegendGap, top, kBarWidth, std::max(g.grid.height(), 3 * fm.height()));
  g.maskedSwatch = QRect(g.legendBar.left(), top - kGap - fm.height(), kBarWidth, fm.height() - 2);
  return g;
}

QRect AttentionHeatmapView::cellRect(int query, int key) const {
  const Geometry g = geometry();
  if (g.cell == 0) return {};
  return QRect(g.grid.left() + key / g.block * g.cell, g.grid.top() + query / g.block * g.cell, g.cell, g.cell);
}

const QImage& AttentionHeatmapView::cells(const HeadMap& map, int block, double top) const {
  const CellsKey key{model_->snapshot(), map.layer(), map.head(), block, static_cast<int>(model_->colourScale()), top};
  if (!(key == cellsKey_)) {
    cells_ = mapBlocks(*model_, map.layer(), map.head(), block, top);
    cellsKey_ = key;
  }
  return cells_;
}

void AttentionHeatmapView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  if (!model_->hasMap()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, tr("No attention map yet: press Train (F5) or Step (F10)."));
    return;
  }
  const Geometry g = geometry();
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(kMargin, kMargin, width() - 2 * kMargin, QFontMetrics(font()).height()), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("Layer %1, head %2 \u00b7 %3 attention \u00b7 %4 \u00b7 rows: queries, columns: keys")
                       .arg(selection_->layer() + 1)
                       .arg(selection_->head() + 1)
                       .arg(shown().variant())
                       .arg(model_->stageText()));
  paintCells(painter, g);
  paintLabels(painter, g);
  paintLegend(painter, g);
}

void AttentionHeatmapView::paintCells(QPainter& painter, const Geometry& g) const {
  // One pixel per cell (or per block of cells), scaled up without smoothing: cells stay exact
  // colours and a long probe paints as fast as a short one. Masked runs of a row are then hatched
  // as one rectangle each.
  const HeadMap map = shown();
  const int n = map.size();
  const double top = colourTop();
  const QImage& image = cells(map, g.block, top);
  drawCells(painter, g.grid, image);  // a vector file gets a rectangle per cell
  // The image already paints masked squares grey (a colour off the ramp); hatch each row's runs.
  QVector<QRect> masked;
  for (int y = 0; y < image.height(); ++y) {
    const auto* row = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width();) {
      if (row[x] != kMaskedColour) {
        ++x;
        continue;
      }
      const int first = x;
      while (x < image.width() && row[x] == kMaskedColour) ++x;
      masked.append(QRect(g.grid.left() + first * g.cell, g.grid.top() + y * g.cell, (x - first) * g.cell, g.cell));
    }
  }
  hatch(painter, masked);
  if (model_->hasEvictions()) {  // one cross per square that holds an evicted cell
    for (int by = 0; by < image.height(); ++by)
      for (int bx = 0; bx < image.width(); ++bx) {
        bool evicted = false;
        for (int q = by * g.block; q < std::min(n, (by + 1) * g.block) && !evicted; ++q)
          for (int k = bx * g.block; k < std::min(n, (bx + 1) * g.block) && !evicted; ++k) evicted = map.isEvicted(q, k);
        if (evicted) markEvicted(painter, cellRect(by * g.block, bx * g.block));
      }
  }
  if (valuesShown_) {
    painter.setFont(cellFont(g.cell));
    for (int q = 0; q < n; ++q)
      for (int k = 0; k <= q && k < n; ++k) {
        const QString text = cellText(q, k);
        if (text.isEmpty()) continue;
        const QColor fill = rampColor(model_->rampPosition(map.weight(q, k), top));
        painter.setPen(fill.lightnessF() > 0.55 ? Qt::black : Qt::white);  // legible on the cell's own colour
        painter.drawText(cellRect(q, k), Qt::AlignCenter, text);
      }
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(g.grid.adjusted(-1, -1, 0, 0));
  if (const int q = selection_->query(); q >= 0 && q < n) {  // the query chosen in any view
    painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
    painter.drawRect(QRect(g.grid.left(), g.grid.top() + q / g.block * g.cell, g.grid.width(), g.cell).adjusted(-1, -1, 0, 0));
  }
}

void AttentionHeatmapView::setValuesShown(bool on) {
  valuesShown_ = on;
  update();
}

QString AttentionHeatmapView::cellText(int query, int key) const {
  const HeadMap map = shown();
  if (!valuesShown_ || query < 0 || key < 0 || query >= map.size() || key >= map.size() || map.isMasked(query, key)) return {};
  if (map.weight(query, key) < 0.005) return {};  // ".00" in every far cell would bury the weights that matter
  const QString text = QString::number(map.weight(query, key), 'f', 2).replace(QRegularExpression(QStringLiteral("^0")), QString());
  return QFontMetrics(cellFont(geometry().cell)).horizontalAdvance(text) + 2 <= geometry().cell ? text : QString();
}

// A weight's text sized to its cell (at least 7 pixels high, so it stays readable when it fits at all).
QFont AttentionHeatmapView::cellFont(int cell) const {
  QFont font = labelFont();
  font.setPixelSize(std::clamp(int(cell * 0.42), 7, 16));
  return font;
}

void AttentionHeatmapView::paintLabels(QPainter& painter, const Geometry& g) const {
  painter.setPen(palette().color(QPalette::Text));
  // each square labelled with its first token
  paintGridLabels(painter, labelFont(), g.squares, [this, &g](int i) { return model_->tokenLabel(i * g.block); },
                  {g.grid, g.cell, g.labelWidth, g.labelLeft, g.labelEvery, kGap});
}

void AttentionHeatmapView::paintLegend(QPainter& painter, const Geometry& g) const {
  const QRect bar = g.legendBar;
  for (int y = 0; y < bar.height(); ++y)
    painter.fillRect(QRect(bar.left(), bar.top() + y, bar.width(), 1), rampColor(1.0 - double(y) / (bar.height() - 1)));
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(bar.adjusted(0, 0, -1, -1));

  const QFontMetrics fm(painter.font());
  painter.setPen(palette().color(QPalette::Text));
  const double top = colourTop();
  // Ticks where the ramp shows top, top/2, 0 (linear) or top and each decade below it (log).
  std::vector<std::pair<double, QString>> ticks;  // ramp position, label
  if (model_->colourScale() == AttentionMapModel::ColourScale::Linear) {
    for (double fraction : {1.0, 0.5, 0.0}) ticks.push_back({fraction, formatWeight(top * fraction)});
  } else {
    for (int d = 0; d <= AttentionMapModel::kLogDecades; ++d) {
      const double w = top * std::pow(10.0, -d);
      ticks.push_back({model_->rampPosition(w, top), d == AttentionMapModel::kLogDecades ? QStringLiteral("≤") + formatWeight(w) : formatWeight(w)});
    }
  }
  for (const auto& [position, label] : ticks) {
    const int y = bar.top() + static_cast<int>(std::lround((1.0 - position) * (bar.height() - 1)));
    painter.drawLine(bar.right() + 1, y, bar.right() + kTick, y);
    const QRect text(bar.right() + kTick + kGap, y - fm.height() / 2, fm.horizontalAdvance(QStringLiteral("≤0.0001")) + kGap,
                     fm.height());
    painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, label);
  }
  painter.save();
  painter.translate(bar.right() + kTick + kGap + fm.horizontalAdvance(QStringLiteral("≤0.0001")) + 2 * kGap,
                    bar.center().y());
  painter.rotate(-90);
  const QString scaleName = model_->colourScale() == AttentionMapModel::ColourScale::Linear ? tr("weight (linear)")
                                                                                          : tr("weight (log scale)");
  painter.drawText(QRect(-bar.height() / 2, -fm.height(), bar.height(), fm.height()), Qt::AlignCenter, scaleName);
  painter.restore();

  fillMasked(painter, g.maskedSwatch);
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(g.maskedSwatch.adjusted(0, 0, -1, -1));
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(g.maskedSwatch.right() + kGap, g.maskedSwatch.top() - 2, width(), fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, tr("masked"));
  if (model_->hasEvictions()) {  // a cache policy ran on this probe: explain its mark
    const QRect swatch = g.maskedSwatch.translated(0, -fm.height());
    painter.fillRect(swatch, rampColor(0.5));
    markEvicted(painter, swatch);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(swatch.right() + kGap, swatch.top() - 2, width(), fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("evicted (%1)").arg(model_->evictionLabel()));
  }
}

bool AttentionHeatmapView::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const Geometry g = geometry();
  if (g.cell > 0 && g.grid.contains(help->pos())) {
    const int query = (help->pos().y() - g.grid.top()) / g.cell * g.block;
    const int key = (help->pos().x() - g.grid.left()) / g.cell * g.block;
    const QString text = g.block > 1 ? blockTooltip(query, key, g.block) : tooltipFor(query, key);
    QToolTip::showText(help->globalPos(), text, this, cellRect(query, key));
  } else {
    QToolTip::hideText();
    event->ignore();
  }
  return true;
}

QString AttentionHeatmapView::tooltipFor(int query, int key) const {
  QString text = tr("query %1 \u201c%2\u201d\nkey %3 \u201c%4\u201d\n")
                     .arg(query)
                     .arg(model_->tokenLabel(query))
                     .arg(key)
                     .arg(model_->tokenLabel(key));
  if (shown().isMasked(query, key)) return text + tr("masked: this key is not visible (score \u2212\u221e)");
  text += tr("weight %1\nscore %2").arg(shown().weight(query, key), 0, 'g', 4).arg(shown().score(query, key), 0, 'g', 4);
  if (shown().isEvicted(query, key)) text += tr("\nevicted from the KV cache before this query (%1)").arg(model_->evictionLabel());
  return text;
}

QString AttentionHeatmapView::blockTooltip(int query, int key, int block) const {
  const HeadMap map = shown();
  const int lastQuery = std::min(map.size(), query + block) - 1, lastKey = std::min(map.size(), key + block) - 1;
  float top = 0;
  bool visible = false;
  for (int q = query; q <= lastQuery; ++q)
    for (int k = key; k <= lastKey; ++k)
      if (!map.isMasked(q, k)) visible = true, top = std::max(top, map.weight(q, k));
  const QString where = tr("queries %1-%2, keys %3-%4 (one square of %5 x %5 cells: the map is larger than the view)")
                            .arg(query).arg(lastQuery).arg(key).arg(lastKey).arg(block);
  return visible ? where + tr("\nlargest weight %1").arg(top, 0, 'g', 4) : where + tr("\nmasked: no key here is visible");
}

QString AttentionHeatmapView::exportName() const {
  return QStringLiteral("attention-L%1-H%2").arg(selection_->layer() + 1).arg(selection_->head() + 1);
}

bool AttentionHeatmapView::hasExportData() const { return model_->hasMap(); }

void AttentionHeatmapView::writeCsv(QTextStream& out) const {
  out << "query,key,query_token,key_token,weight,score,masked,evicted\n";
  const HeadMap map = shown();
  const int n = map.size();
  for (int q = 0; q < n; ++q)
    for (int k = 0; k < n; ++k) {
      const bool masked = map.isMasked(q, k);
      const float score = map.score(q, k);
      out << q << ',' << k << ',' << csvField(model_->tokenLabel(q)) << ',' << csvField(model_->tokenLabel(k)) << ','
          << QString::number(map.weight(q, k), 'g', 7) << ','
          << (masked || std::isnan(score) ? QString() : QString::number(score, 'g', 7)) << ',' << (masked ? 1 : 0) << ','
          << (map.isEvicted(q, k) ? 1 : 0) << '\n';
    }
}

void AttentionHeatmapView::mousePressEvent(QMouseEvent* event) {
  const Geometry g = geometry();
  const QPoint p = event->position().toPoint();
  if (event->button() != Qt::LeftButton || g.cell == 0 || p.y() < g.grid.top() || p.y() > g.grid.bottom()) return QWidget::mousePressEvent(event);
  const int query = (p.y() - g.grid.top()) / g.cell * g.block;
  selection_->selectQuery(query == selection_->query() ? -1 : query);  // a second click clears it
}

HeadMap AttentionHeatmapView::shown() const { return selection_->shown(); }

double AttentionHeatmapView::colourTop() const { return colourScale_ ? colourScale_->top(selection_) : shown().maxWeight(); }

void AttentionHeatmapView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
