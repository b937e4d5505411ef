#include "map_image.h"

#include "attention_map_model.h"
#include "colormap.h"

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

}  // namespace attnlab
