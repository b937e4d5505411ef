#include "grid_labels.h"

#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace attnlab {

int labelBandWidth(const QFontMetrics& fm, int n, const std::function<QString(int)>& label, int maxChars) {
  int width = 0;
  for (int i = 0; i < n; ++i) width = std::max(width, fm.horizontalAdvance(label(i)));
  return std::min(width, fm.horizontalAdvance(QLatin1Char('M')) * maxChars);
}

int labelStride(const QFontMetrics& fm, int cell) {
  return std::max(1, static_cast<int>(std::ceil(double(fm.height()) / std::max(1, cell))));
}

void paintGridLabels(QPainter& painter, const QFont& font, int n, const std::function<QString(int)>& label,
                     const GridLabelLayout& g) {
  const QFontMetrics fm(font);
  painter.setFont(font);
  for (int i = 0; i < n; i += g.every) {
    const QString text = fm.elidedText(label(i), Qt::ElideRight, g.width);
    const int centre = g.grid.top() + i * g.cell + g.cell / 2;
    // Query labels, right-aligned against the rows.
    painter.drawText(QRect(g.left, centre - fm.height() / 2, g.width, fm.height()), Qt::AlignRight | Qt::AlignVCenter, text);
    // Key labels, rotated to read upwards from the top of each column.
    painter.save();
    painter.translate(g.grid.left() + i * g.cell + g.cell / 2, g.grid.top() - g.gap);
    painter.rotate(-90);
    painter.drawText(QRect(0, -fm.height() / 2, g.width, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
    painter.restore();
  }
}

}  // namespace attnlab
