#include "attention_difference_model.h"

#include <algorithm>
#include <cmath>

#include "head_selection.h"

namespace attnlab {

AttentionDifferenceModel::AttentionDifferenceModel(QObject* parent) : QObject(parent) { recompute(); }

void AttentionDifferenceModel::setRuns(const HeadSelection* a, const HeadSelection* b) {
  for (const auto& c : connections_) disconnect(c);
  connections_.clear();
  a_ = a;
  b_ = b;
  for (const HeadSelection* run : {a, b})
    if (run) {
      connections_.push_back(connect(run->map(), &AttentionMapModel::mapChanged, this, &AttentionDifferenceModel::recompute));
      connections_.push_back(connect(run, &HeadSelection::headChanged, this, &AttentionDifferenceModel::recompute));
      connections_.push_back(connect(run, &QObject::destroyed, this, [this] { setRuns(nullptr, nullptr); }));
    }
  recompute();
}

void AttentionDifferenceModel::recompute() {
  size_ = 0;
  maxAbs_ = 0;
  if (!a_ || !b_) {
    reason_ = tr("Choose two runs to compare");
  } else if (!a_->map()->hasMap() || !b_->map()->hasMap()) {
    reason_ = tr("Waiting for both runs' maps: press Train");
  } else if (a_->layer() != b_->layer() || a_->head() != b_->head()) {
    reason_ = tr("The runs show different heads (layer %1 head %2 vs layer %3 head %4): one of them lacks the selected head")
                  .arg(a_->layer() + 1).arg(a_->head() + 1).arg(b_->layer() + 1).arg(b_->head() + 1);
  } else if (a_->map()->snapshot()->trace.tokens != b_->map()->snapshot()->trace.tokens) {
    reason_ = tr("The runs show different probes (their tasks differ), so their maps cannot be subtracted");
  } else {
    reason_.clear();
    layer_ = a_->layer();
    head_ = a_->head();
    const HeadMap mapA = a_->shown(), mapB = b_->shown();
    const int T = mapA.size();
    const HeadTrace& ha = *a_->map()->head(layer_, head_);
    const HeadTrace& hb = *b_->map()->head(layer_, head_);
    difference_ = ha.weights - hb.weights;
    masked_.assign(static_cast<size_t>(T) * T, 0);
    for (int q = 0; q < T; ++q)
      for (int k = 0; k < T; ++k) {
        const bool masked = mapA.isMasked(q, k) || mapB.isMasked(q, k);
        masked_[static_cast<size_t>(q) * T + k] = masked;
        if (!masked) maxAbs_ = std::max(maxAbs_, std::abs(difference_(q, k)));
      }
    size_ = T;
  }
  emit differenceChanged();
}

QString AttentionDifferenceModel::tokenLabel(int position) const { return a_ ? a_->map()->tokenLabel(position) : QString(); }

QColor AttentionDifferenceModel::colourFor(double difference, double top) {
  const double t = top > 0 ? std::clamp(difference / top, -1.0, 1.0) : 0.0;
  // From white towards a saturated red (t > 0) or blue (t < 0), linearly in sRGB.
  const QColor end = t >= 0 ? QColor(178, 24, 43) : QColor(33, 102, 172);
  const double s = std::abs(t);
  auto mix = [s](int from, int to) { return static_cast<int>(std::lround(from + s * (to - from))); };
  return QColor(mix(255, end.red()), mix(255, end.green()), mix(255, end.blue()));
}

}  // namespace attnlab
