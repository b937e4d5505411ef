#include "patching_map.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "unit_labels.h"

namespace attnlab {
namespace {
constexpr int kLeft = 64, kTop = 8, kBottom = 48;

// Diverging ramp: blue (-1) - white (0) - red (+1), clamped.
QColor effectColour(double effect) {
  const double x = std::clamp(effect, -1.0, 1.0);
  const int fade = static_cast<int>(255 * (1 - std::abs(x)));
  return x >= 0 ? QColor(255, fade, fade) : QColor(fade, fade, 255);
}
}  // namespace

PatchingMap::PatchingMap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(320, 160);
}

QString PatchingMap::rowLabel(int row) const { return row < rowLabels_.size() ? rowLabels_[row] : layerLabel(row); }

int PatchingMap::columnOf(const PatchEffect& e) const {
  if (e.head < 0) return e.position;
  return e.position < 0 ? e.head : e.head * positions_ + e.position;
}

void PatchingMap::setEffects(std::vector<PatchEffect> rows, QStringList rowLabels, QStringList columnLabels, int positions) {
  rows_ = std::move(rows);
  rowLabels_ = std::move(rowLabels);
  layers_ = static_cast<int>(rowLabels_.size());
  for (const PatchEffect& e : rows_) layers_ = std::max(layers_, e.layer + 1);
  labels_ = std::move(columnLabels);
  positions_ = positions;
  columns_ = static_cast<int>(labels_.size());
  update();
}

// Room for the widest row label ("after layer 12"), at least kLeft.
int PatchingMap::leftBand() const {
  int widest = 0;
  for (int l = 0; l < layers_; ++l) widest = std::max(widest, fontMetrics().horizontalAdvance(rowLabel(l)));
  return std::max(kLeft, widest + 8);
}

QRectF PatchingMap::gridRect() const {
  const int left = leftBand();
  return QRectF(left, kTop, width() - left - 8, height() - kTop - kBottom);
}

const PatchEffect* PatchingMap::cellAt(QPointF p) const {
  const QRectF g = gridRect();
  if (!g.contains(p) || layers_ == 0 || columns_ == 0) return nullptr;
  const int column = static_cast<int>((p.x() - g.left()) / g.width() * columns_);
  const int layer = static_cast<int>((p.y() - g.top()) / g.height() * layers_);
  for (const PatchEffect& e : rows_)
    if (e.layer == layer && columnOf(e) == column) return &e;
  return nullptr;
}

void PatchingMap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  if (rows_.empty()) {
    painter.drawText(rect(), Qt::AlignCenter, tr("No patching yet: enter a prompt pair and press Run."));
    return;
  }
  const QRectF g = gridRect();
  const double cw = g.width() / columns_, ch = g.height() / layers_;
  for (const PatchEffect& e : rows_)
    painter.fillRect(QRectF(g.left() + columnOf(e) * cw, g.top() + e.layer * ch, cw, ch), effectColour(e.effect));
  painter.setPen(palette().text().color());
  for (int l = 0; l < layers_; ++l)
    painter.drawText(QRectF(0, g.top() + l * ch, g.left() - 4, ch), Qt::AlignRight | Qt::AlignVCenter, rowLabel(l));
  const int step = std::max(1, static_cast<int>(std::ceil(28 / cw)));  // keep labels apart
  for (int c = 0; c < columns_; c += step)
    painter.drawText(QRectF(g.left() + c * cw, g.bottom() + 2, cw * step, 16), Qt::AlignLeft, labels_[c]);
  painter.drawText(QRectF(g.left(), g.bottom() + 20, g.width(), 20), Qt::AlignLeft,
                   tr("red: restores the clean answer (1), white: nothing (0), blue: the other way"));
}

void PatchingMap::mouseMoveEvent(QMouseEvent* event) {
  const PatchEffect* e = cellAt(event->position());
  if (!e) {
    QToolTip::hideText();
    return;
  }
  QString text = rowLabel(e->layer);
  if (e->head >= 0) text += tr(", head %1").arg(e->head + 1);
  if (e->position >= 0) text += tr(", position %1").arg(e->position);
  QToolTip::showText(event->globalPosition().toPoint(), text + tr("\neffect %1").arg(e->effect, 0, 'f', 3), this);
}

void PatchingMap::mousePressEvent(QMouseEvent* event) {
  if (const PatchEffect* e = cellAt(event->position())) emit cellClicked(e->layer, e->head);
}

}  // namespace attnlab
