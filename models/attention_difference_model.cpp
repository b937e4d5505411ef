#include "attention_difference_model.h"

#include <algorithm>
#include <cmath>

#include "attention_map_model.h"

namespace attnlab {

AttentionDifferenceModel::AttentionDifferenceModel(QObject* parent) : QObject(parent) { recompute(); }

void AttentionDifferenceModel::setMaps(const AttentionMapModel* a, const AttentionMapModel* b) {
  for (const auto& c : connections_) disconnect(c);
  connections_.clear();
  a_ = a;
  b_ = b;
  for (const AttentionMapModel* map : {a, b})
    if (map) {
      connections_.push_back(connect(map, &AttentionMapModel::mapChanged, this, &AttentionDifferenceModel::recompute));
      connections_.push_back(connect(map, &QObject::destroyed, this, [this] { setMaps(nullptr, nullptr); }));
    }
  recompute();
}

void AttentionDifferenceModel::recompute() {
  size_ = 0;
  maxAbs_ = 0;
  if (!a_ || !b_) {
    reason_ = tr("Choose two runs to compare");
  } else if (!a_->hasMap() || !b_->hasMap()) {
    reason_ = tr("Waiting for both runs' maps: press Train");
  } else if (a_->selectedLayer() != b_->selectedLayer() || a_->selectedHead() != b_->selectedHead()) {
    reason_ = tr("The runs show different heads (layer %1 head %2 vs layer %3 head %4): one of them lacks the selected head")
                  .arg(a_->selectedLayer() + 1).arg(a_->selectedHead() + 1).arg(b_->selectedLayer() + 1).arg(b_->selectedHead() + 1);
  } else if (a_->snapshot()->trace.tokens != b_->snapshot()->trace.tokens) {
    reason_ = tr("The runs show different probes (their tasks differ), so their maps cannot be subtracted");
  } else {
    reason_.clear();
    layer_ = a_->selectedLayer();
    head_ = a_->selectedHead();
    const int T = a_->size();
    const HeadTrace& ha = *a_->head(layer_, head_);
    const HeadTrace& hb = *b_->head(layer_, head_);
    difference_ = ha.weights - hb.weights;
    masked_.assign(static_cast<size_t>(T) * T, 0);
    for (int q = 0; q < T; ++q)
      for (int k = 0; k < T; ++k) {
        const bool masked = a_->isMasked(q, k) || b_->isMasked(q, k);
        masked_[static_cast<size_t>(q) * T + k] = masked;
        if (!masked) maxAbs_ = std::max(maxAbs_, std::abs(difference_(q, k)));
      }
    size_ = T;
  }
  emit differenceChanged();
}

QString AttentionDifferenceModel::tokenLabel(int position) const { return a_ ? a_->tokenLabel(position) : QString(); }

QColor AttentionDifferenceModel::colourFor(double difference, double top) {
  const double t = top > 0 ? std::clamp(difference / top, -1.0, 1.0) : 0.0;
  // From white towards a saturated red (t > 0) or blue (t < 0), linearly in sRGB.
  const QColor end = t >= 0 ? QColor(178, 24, 43) : QColor(33, 102, 172);
  const double s = std::abs(t);
  auto mix = [s](int from, int to) { return static_cast<int>(std::lround(from + s * (to - from))); };
  return QColor(mix(255, end.red()), mix(255, end.green()), mix(255, end.blue()));
}

}  // namespace attnlab
