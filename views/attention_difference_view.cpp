#include "attention_difference_view.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMenu>
#include <QPainter>
#include <QTextStream>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "attention_difference_model.h"
#include "attention_map_model.h"
#include "grid_labels.h"
#include "head_selection.h"
#include "map_image.h"

namespace attnlab {

namespace {

constexpr int kMargin = 6;
constexpr int kGap = 4;
constexpr int kLegendGap = 12;
constexpr int kBarWidth = 14;
constexpr int kMaxLabelChars = 6;
const QColor kMaskedFill(215, 215, 215);

QString signedNumber(double v) {
  return (v > 0 ? QStringLiteral("+") : v < 0 ? QStringLiteral("−") : QString()) + QString::number(std::abs(v), 'g', 2);
}

}  // namespace

AttentionDifferenceView::AttentionDifferenceView(const AttentionDifferenceModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  connect(model_, &AttentionDifferenceModel::differenceChanged, this, qOverload<>(&QWidget::update));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void AttentionDifferenceView::setRunNames(const QString& a, const QString& b) {
  nameA_ = a;
  nameB_ = b;
  update();
}

QFont AttentionDifferenceView::labelFont() const {
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * 0.85);
  return f;
}

AttentionDifferenceView::Geometry AttentionDifferenceView::geometry() const {
  Geometry g;
  const int n = model_->size();
  if (n == 0) return g;
  const QFontMetrics fm(labelFont());
  g.labelWidth = labelBandWidth(fm, n, [this](int i) { return model_->tokenLabel(i); }, kMaxLabelChars);
  const int top = kMargin + 2 * QFontMetrics(font()).height() + kGap + g.labelWidth + kGap;
  const int left = kMargin + g.labelWidth + kGap;
  const int legendWidth = kLegendGap + kBarWidth + 2 * kGap + fm.horizontalAdvance(QStringLiteral("−0.000")) + kMargin;
  const int side = std::max(1, std::min(width() - left - legendWidth, height() - top - kMargin));
  g.block = cellsPerSquare(n, side);  // a long probe shows whole, each square its block's largest difference
  g.squares = (n + g.block - 1) / g.block;
  g.cell = std::max(1, side / g.squares);
  g.grid = QRect(left, top, g.cell * g.squares, g.cell * g.squares);
  g.labelEvery = labelStride(fm, g.cell);
  g.legendBar = QRect(g.grid.right() + 1 + kLegendGap, top, kBarWidth, std::max(g.grid.height(), 4 * fm.height()));
  return g;
}

QRect AttentionDifferenceView::cellRect(int query, int key) const {
  const Geometry g = geometry();
  if (g.cell == 0) return {};
  return QRect(g.grid.left() + key / g.block * g.cell, g.grid.top() + query / g.block * g.cell, g.cell, g.cell);
}

void AttentionDifferenceView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  const QFontMetrics titleMetrics(font());
  const QRect titleLine(kMargin, kMargin, width() - 2 * kMargin, titleMetrics.height());
  painter.setPen(palette().color(QPalette::Text));
  if (!model_->hasDifference()) {
    painter.drawText(titleLine, Qt::AlignLeft | Qt::AlignVCenter, tr("Difference %1 \u2212 %2").arg(nameA_, nameB_));
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect().adjusted(kMargin, 0, -kMargin, 0), Qt::AlignCenter | Qt::TextWordWrap, model_->reason());
    return;
  }
  painter.drawText(titleLine, Qt::AlignLeft | Qt::AlignVCenter,
                   titleMetrics.elidedText(tr("Difference %1 \u2212 %2 \u00b7 layer %3, head %4")
                                               .arg(nameA_, nameB_).arg(model_->layer() + 1).arg(model_->head() + 1),
                                           Qt::ElideRight, titleLine.width()));
  painter.setPen(palette().color(QPalette::PlaceholderText));
  painter.drawText(titleLine.translated(0, titleMetrics.height()), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("red: %1 attends more, blue: %2 attends more").arg(nameA_, nameB_));

  const Geometry g = geometry();
  const double top = std::max(1e-6f, model_->maxAbsDifference());
  QImage image(g.squares, g.squares, QImage::Format_RGB32);
  for (int y = 0; y < g.squares; ++y)
    for (int x = 0; x < g.squares; ++x) {
      const auto [visible, d] = largestDifference(y * g.block, x * g.block, g.block);
      image.setPixel(x, y, visible ? AttentionDifferenceModel::colourFor(d, top).rgb() : kMaskedFill.rgb());
    }
  drawCells(painter, g.grid, image);
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(g.grid.adjusted(-1, -1, 0, 0));

  painter.setPen(palette().color(QPalette::Text));
  paintGridLabels(painter, labelFont(), g.squares, [this, &g](int i) { return model_->tokenLabel(i * g.block); },
                  {g.grid, g.cell, g.labelWidth, kMargin, g.labelEvery, kGap});
  const QFontMetrics fm(labelFont());

  // Legend: +top (A more) at the top, 0 in the middle, -top (B more) at the bottom.
  const QRect bar = g.legendBar;
  for (int y = 0; y < bar.height(); ++y) {
    const double d = top * (1.0 - 2.0 * y / std::max(1, bar.height() - 1));
    painter.fillRect(QRect(bar.left(), bar.top() + y, bar.width(), 1), AttentionDifferenceModel::colourFor(d, top));
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(bar.adjusted(0, 0, -1, -1));
  painter.setPen(palette().color(QPalette::Text));
  const std::pair<double, QString> ticks[] = {{0.0, signedNumber(top)}, {0.5, QStringLiteral("0")}, {1.0, signedNumber(-top)}};
  for (const auto& [fraction, label] : ticks) {
    const int y = bar.top() + static_cast<int>(std::lround(fraction * (bar.height() - 1)));
    painter.drawLine(bar.right() + 1, y, bar.right() + kGap, y);
    painter.drawText(QRect(bar.right() + 2 * kGap, y - fm.height() / 2, width(), fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                     fm.elidedText(label, Qt::ElideRight, width() - bar.right() - 3 * kGap));
  }
}

bool AttentionDifferenceView::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const Geometry g = geometry();
  if (g.cell == 0 || !g.grid.contains(help->pos())) {
    QToolTip::hideText();
    event->ignore();
    return true;
  }
  const int query = (help->pos().y() - g.grid.top()) / g.cell * g.block;
  const int key = (help->pos().x() - g.grid.left()) / g.cell * g.block;
  if (g.block > 1) {
    const int lastQuery = std::min(model_->size(), query + g.block) - 1, lastKey = std::min(model_->size(), key + g.block) - 1;
    const auto [visible, d] = largestDifference(query, key, g.block);
    QToolTip::showText(help->globalPos(),
                       tr("queries %1-%2, keys %3-%4 (one square of %5 x %5 cells: the map is larger than the view)\n%6")
                           .arg(query).arg(lastQuery).arg(key).arg(lastKey).arg(g.block)
                           .arg(visible ? tr("largest difference %1").arg(signedNumber(d)) : tr("masked")),
                       this, cellRect(query, key));
    return true;
  }
  QString text = tr("query %1 \u201c%2\u201d\nkey %3 \u201c%4\u201d\n")
                     .arg(query).arg(model_->tokenLabel(query)).arg(key).arg(model_->tokenLabel(key));
  if (model_->isMasked(query, key)) {
    text += tr("masked");
  } else {
    const float a = model_->a()->shown().weight(query, key), b = model_->b()->shown().weight(query, key);
    text += tr("%1: %2\n%3: %4\ndifference %5").arg(nameA_).arg(a, 0, 'g', 3).arg(nameB_).arg(b, 0, 'g', 3).arg(signedNumber(a - b));
  }
  QToolTip::showText(help->globalPos(), text, this, cellRect(query, key));
  return true;
}

std::pair<bool, float> AttentionDifferenceView::largestDifference(int query, int key, int block) const {
  const int n = model_->size();
  bool visible = false;
  float largest = 0;
  for (int q = query; q < std::min(n, query + block); ++q)
    for (int k = key; k < std::min(n, key + block); ++k) {
      if (model_->isMasked(q, k)) continue;
      const float d = model_->difference(q, k);
      if (!visible || std::abs(d) > std::abs(largest)) largest = d;
      visible = true;
    }
  return {visible, largest};
}

QString AttentionDifferenceView::exportName() const {
  return QStringLiteral("attention-difference-L%1-H%2").arg(model_->layer() + 1).arg(model_->head() + 1);
}

bool AttentionDifferenceView::hasExportData() const { return model_->hasDifference(); }

void AttentionDifferenceView::writeCsv(QTextStream& out) const {
  out << "query,key,query_token,key_token,difference,masked\n";
  const int n = model_->size();
  for (int q = 0; q < n; ++q)
    for (int k = 0; k < n; ++k) {
      const bool masked = model_->isMasked(q, k);
      out << q << ',' << k << ',' << csvField(model_->tokenLabel(q)) << ',' << csvField(model_->tokenLabel(k)) << ','
          << (masked ? QString() : QString::number(model_->difference(q, k), 'g', 7)) << ',' << (masked ? 1 : 0) << '\n';
    }
}

void AttentionDifferenceView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
