#include "attention_map_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "colormap.h"

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

bool AttentionMapModel::isSwitchedOff(int layer, int head) const {
  if (!snapshot_ || !snapshot_->model) return false;
  const auto& gains = snapshot_->model->headGains;
  return layer >= 0 && layer < int(gains.size()) && head >= 0 && head < int(gains[layer].size()) && gains[layer][head] == 0;
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

void AttentionMapModel::updateMaxWeight() { maxWeight_ = hasMap() ? maxWeight(layer_, head_) : 0; }

const HeadTrace* AttentionMapModel::head(int layer, int head) const {
  if (head < 0 || head >= headCount(layer)) return nullptr;
  return &snapshot_->trace.layers[layer].heads[head];
}

float AttentionMapModel::maxWeight(int layer, int head) const {
  const HeadTrace* h = this->head(layer, head);
  if (!h) return 0;
  float top = 0;
  // Only finite weights count: a diverging map must not blank the colour scale.
  for (Eigen::Index i = 0; i < h->weights.size(); ++i)
    if (std::isfinite(h->weights.data()[i])) top = std::max(top, h->weights.data()[i]);
  return top;
}

bool AttentionMapModel::isEvicted(int layer, int head, int query, int key) const {
  if (!snapshot_ || layer < 0 || layer >= static_cast<int>(snapshot_->evicted.size())) return false;
  const auto& heads = snapshot_->evicted[layer];
  if (head < 0 || head >= static_cast<int>(heads.size())) return false;
  const HeadTrace* h = this->head(layer, head);
  const long n = h ? h->weights.rows() : 0;
  const long index = long(query) * n + key;
  return query >= 0 && key >= 0 && query < n && key < n && index < static_cast<long>(heads[head].size()) &&
         heads[head][index];
}

void AttentionMapModel::setColourScale(ColourScale scale) {
  if (scale == scale_) return;
  scale_ = scale;
  emit mapChanged();
}

double AttentionMapModel::rampPosition(double weight, double top) const {
  if (!(top > 0) || !(weight > 0)) return 0;  // also NaN
  if (scale_ == ColourScale::Linear) return std::min(weight / top, 1.0);
  const double decadesBelowTop = std::log10(top / weight);
  return std::clamp(1.0 - decadesBelowTop / kLogDecades, 0.0, 1.0);
}

QImage AttentionMapModel::mapImage(int layer, int head) const {
  const HeadTrace* h = this->head(layer, head);
  if (!h || h->weights.rows() == 0) return {};
  const int n = static_cast<int>(h->weights.rows());
  const double top = maxWeight(layer, head);
  QImage image(n, n, QImage::Format_RGB32);
  for (int q = 0; q < n; ++q) {
    auto* row = reinterpret_cast<QRgb*>(image.scanLine(q));
    for (int k = 0; k < n; ++k) {
      const bool masked = q < h->scores.rows() && k < h->scores.cols() && std::isinf(h->scores(q, k)) && h->scores(q, k) < 0;
      row[k] = masked ? kMaskedColour : rampColor(rampPosition(h->weights(q, k), top)).rgb();
    }
  }
  return image;
}

}  // namespace attnlab
