#include "map_image.h"

#include <cmath>

#include "attention_map_model.h"
#include "colormap.h"

namespace attnlab {

QImage mapImage(const AttentionMapModel& model, int layer, int head, double top) {
  const HeadTrace* h = model.head(layer, head);
  if (!h || h->weights.rows() == 0) return {};
  const int n = static_cast<int>(h->weights.rows());
  if (top < 0) top = model.maxWeight(layer, head);
  QImage image(n, n, QImage::Format_RGB32);
  for (int q = 0; q < n; ++q) {
    auto* row = reinterpret_cast<QRgb*>(image.scanLine(q));
    for (int k = 0; k < n; ++k) {
      const bool masked = q < h->scores.rows() && k < h->scores.cols() && std::isinf(h->scores(q, k)) && h->scores(q, k) < 0;
      row[k] = masked ? kMaskedColour : rampColor(model.rampPosition(h->weights(q, k), top)).rgb();
    }
  }
  return image;
}

}  // namespace attnlab
