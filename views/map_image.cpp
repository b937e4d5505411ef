#include "map_image.h"

#include "attention_map_model.h"
#include "colormap.h"

#include <QPaintEngine>
#include <QPainter>
#include <algorithm>
#include <vector>

namespace attnlab {

QImage mapImage(const AttentionMapModel& model, int layer, int head, double top) {
  const HeadMap map = model.headMap(layer, head);
  const int n = map.size();
  if (n == 0) return {};
  if (top < 0) top = map.maxWeight();
  QImage image(n, n, QImage::Format_RGB32);
  for (int q = 0; q < n; ++q) {
    auto* row = reinterpret_cast<QRgb*>(image.scanLine(q));
    for (int k = 0; k < n; ++k)
      row[k] = map.isMasked(q, k) ? kMaskedColour : rampColor(model.rampPosition(map.weight(q, k), top)).rgb();
  }
  return image;
}

QImage mapBlocks(const AttentionMapModel& model, int layer, int head, int block, double top) {
  const HeadMap map = model.headMap(layer, head);
  const int n = map.size();
  if (n == 0 || block <= 0) return {};
  if (block == 1) return mapImage(model, layer, head, top);
  if (top < 0) top = map.maxWeight();
  const int pixels = (n + block - 1) / block;
  QImage image(pixels, pixels, QImage::Format_RGB32);
  std::vector<float> peak(pixels);
  std::vector<char> visible(pixels);
  for (int by = 0; by < pixels; ++by) {
    std::fill(peak.begin(), peak.end(), 0.f);
    std::fill(visible.begin(), visible.end(), 0);
    for (int q = by * block; q < std::min(n, (by + 1) * block); ++q)
      for (int k = 0; k < n; ++k) {
        if (map.isMasked(q, k)) continue;
        visible[k / block] = 1;
        peak[k / block] = std::max(peak[k / block], map.weight(q, k));
      }
    auto* row = reinterpret_cast<QRgb*>(image.scanLine(by));
    for (int bx = 0; bx < pixels; ++bx) row[bx] = visible[bx] ? rampColor(model.rampPosition(peak[bx], top)).rgb() : kMaskedColour;
  }
  return image;
}

QImage mapThumbnail(const AttentionMapModel& model, int layer, int head, int side) {
  const int n = model.headMap(layer, head).size();
  if (n == 0 || side <= 0) return {};
  return mapBlocks(model, layer, head, (n + side - 1) / side);
}

void drawCells(QPainter& painter, const QRectF& target, const QImage& cells) {
  if (cells.isNull()) return;
  if (painter.paintEngine()->type() != QPaintEngine::SVG) {
    painter.drawImage(target, cells);
    return;
  }
  const double w = target.width() / cells.width(), h = target.height() / cells.height();
  for (int y = 0; y < cells.height(); ++y)
    for (int x = 0; x < cells.width(); ++x)
      painter.fillRect(QRectF(target.left() + x * w, target.top() + y * h, w, h), QColor(cells.pixel(x, y)));
}

}  // namespace attnlab
