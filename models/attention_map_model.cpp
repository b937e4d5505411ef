#include "attention_map_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// Layers and heads per layer: what the layer/head pickers depend on.
std::vector<int> shapeOf(const TraceSnapshot* snapshot) {
  std::vector<int> heads;
  if (snapshot)
    for (const LayerTrace& layer : snapshot->trace.layers) heads.push_back(static_cast<int>(layer.heads.size()));
  return heads;
}

}  // namespace

void AttentionMapModel::setTrace(std::shared_ptr<const TraceSnapshot> snapshot) {
  const bool reshaped = shapeOf(snapshot.get()) != shapeOf(snapshot_.get());
  snapshot_ = std::move(snapshot);
  if (layer_ >= layerCount() || head_ >= headCount(layer_)) layer_ = head_ = 0;
  updateMaxWeight();
  if (reshaped) emit shapeChanged();
  emit mapChanged();
}

void AttentionMapModel::clear() {
  snapshot_.reset();
  layer_ = head_ = 0;
  maxWeight_ = 0;
  emit shapeChanged();
  emit mapChanged();
}

void AttentionMapModel::select(int layer, int head) {
  if (layer < 0 || layer >= layerCount() || head < 0 || head >= headCount(layer)) return;
  if (layer == layer_ && head == head_) return;
  layer_ = layer;
  head_ = head;
  updateMaxWeight();
  emit mapChanged();
}

bool AttentionMapModel::hasMap() const { return layerCount() > 0 && headCount(layer_) > 0 && size() > 0; }

int AttentionMapModel::layerCount() const { return snapshot_ ? static_cast<int>(snapshot_->trace.layers.size()) : 0; }

int AttentionMapModel::headCount(int layer) const {
  if (layer < 0 || layer >= layerCount()) return 0;
  return static_cast<int>(snapshot_->trace.layers[layer].heads.size());
}

QString AttentionMapModel::variant() const {
  return layerCount() > 0 ? QString::fromStdString(snapshot_->trace.layers[layer_].variant) : QString();
}

const HeadTrace& AttentionMapModel::selected() const { return snapshot_->trace.layers[layer_].heads[head_]; }

int AttentionMapModel::size() const {
  if (layerCount() == 0 || headCount(layer_) == 0) return 0;
  return static_cast<int>(selected().weights.rows());
}

float AttentionMapModel::weight(int query, int key) const { return selected().weights(query, key); }

float AttentionMapModel::score(int query, int key) const {
  const Mat& scores = selected().scores;
  const bool recorded = query < scores.rows() && key < scores.cols();
  return recorded ? scores(query, key) : std::numeric_limits<float>::quiet_NaN();
}

bool AttentionMapModel::isMasked(int query, int key) const {
  const HeadTrace& head = selected();
  // A trace without scores has nothing masked that we could tell from a zero weight.
  if (head.scores.rows() <= query || head.scores.cols() <= key) return false;
  const float s = head.scores(query, key);
  return std::isinf(s) && s < 0;
}

QString AttentionMapModel::tokenLabel(int position) const {
  if (!snapshot_) return {};
  const Trace& trace = snapshot_->trace;
  if (position < 0 || position >= static_cast<int>(trace.labels.size())) {
    const bool known = position >= 0 && position < static_cast<int>(trace.tokens.size());
    return known ? QStringLiteral("#%1").arg(trace.tokens[position]) : QString();
  }
  QString text = QString::fromStdString(trace.labels[position]);
  if (text.isEmpty()) return QStringLiteral("\u00b7");
  text.replace(QLatin1Char(' '), QChar(0x2423));   // open box
  text.replace(QLatin1Char('\n'), QChar(0x21b5));  // downwards arrow with corner
  text.replace(QLatin1Char('\t'), QChar(0x21e5));  // rightwards arrow to bar
  return text;
}

void AttentionMapModel::updateMaxWeight() {
  maxWeight_ = 0;
  if (!hasMap()) return;
  const Mat& w = selected().weights;
  // Only finite weights count: a diverging map must not blank the colour scale.
  for (Eigen::Index i = 0; i < w.size(); ++i)
    if (std::isfinite(w.data()[i])) maxWeight_ = std::max(maxWeight_, w.data()[i]);
}

}  // namespace attnlab
