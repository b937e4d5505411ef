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

// ---- one head's map ----------------------------------------------------------------------------

HeadMap::HeadMap(const AttentionMapModel* model, int layer, int head)
    : model_(model), trace_(model->head(layer, head)), layer_(layer), head_(head) {}

int HeadMap::size() const { return trace_ ? static_cast<int>(trace_->weights.rows()) : 0; }

float HeadMap::weight(int query, int key) const { return trace_->weights(query, key); }

float HeadMap::score(int query, int key) const {
  const Mat& scores = trace_->scores;
  const bool recorded = query < scores.rows() && key < scores.cols();
  return recorded ? scores(query, key) : std::numeric_limits<float>::quiet_NaN();
}

bool HeadMap::isMasked(int query, int key) const {
  // A trace without scores has nothing masked that we could tell from a zero weight.
  if (trace_->scores.rows() <= query || trace_->scores.cols() <= key) return false;
  const float s = trace_->scores(query, key);
  return std::isinf(s) && s < 0;
}

float HeadMap::maxWeight() const { return model_->maxWeight(layer_, head_); }

QString HeadMap::variant() const {
  return trace_ ? QString::fromStdString(model_->snapshot()->trace.layers[layer_].variant) : QString();
}

bool HeadMap::isEvicted(int query, int key) const { return model_->isEvicted(layer_, head_, query, key); }

// ---- the trace ---------------------------------------------------------------------------------

void AttentionMapModel::setTrace(std::shared_ptr<const TraceSnapshot> snapshot) {
  const bool reshaped = shapeOf(snapshot.get()) != shapeOf(snapshot_.get());
  snapshot_ = std::move(snapshot);
  if (reshaped) emit shapeChanged();
  emit mapChanged();
}

void AttentionMapModel::clear() {
  snapshot_.reset();
  emit shapeChanged();
  emit mapChanged();
}

bool AttentionMapModel::hasMap() const { return layerCount() > 0 && headCount(0) > 0 && headMap(0, 0).size() > 0; }

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

bool AttentionMapModel::isOpenedModel() const {
  return snapshot_ && snapshot_->model && snapshot_->model->run && !snapshot_->model->run->openedName.empty();
}

QString AttentionMapModel::stageText() const {
  if (isOpenedModel()) return QString::fromStdString(snapshot_->model->run->openedName);
  return tr("step %1").arg(step());
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

void AttentionMapModel::setEvictions(std::shared_ptr<const KvCacheResult> result, int run) {
  if (result && (run < 0 || run >= static_cast<int>(result->record.runs.size()))) result.reset();
  evictions_ = std::move(result);
  evictionRun_ = run;
  emit mapChanged();
}

bool AttentionMapModel::hasEvictions() const {
  if (!evictions_ || !snapshot_ || evictions_->modelStep != snapshot_->step) return false;  // marks of this model only
  const OccupancyRecord& r = evictions_->record;
  const std::vector<int>& probe = snapshot_->trace.tokens;
  const std::vector<int>& fed = r.runs[evictionRun_].tokens;
  return !probe.empty() && static_cast<int>(probe.size()) <= r.promptLength && std::equal(probe.begin(), probe.end(), fed.begin()) &&
         layerCount() <= r.layers;
}

QString AttentionMapModel::evictionLabel() const {
  return hasEvictions() ? QString::fromStdString(evictions_->record.runs[evictionRun_].label()) : QString();
}

// Query q (decoding step q) attended over what the cache held after step q - 1's eviction, plus itself.
bool AttentionMapModel::isEvicted(int layer, int head, int query, int key) const {
  if (!hasEvictions() || query <= 0 || key < 0 || key >= query || head < 0 || head >= headCount(layer)) return false;
  const OccupancyRecord& r = evictions_->record;
  if (!r.cachesLayer[layer]) return false;
  const HeadRaster& raster = r.raster(evictionRun_, layer, head / r.group);
  if (raster.cells.empty() || query >= r.steps) return false;
  const CellState s = raster.cells[r.cell(query - 1, key)];
  return s == CellState::EvictedNow || s == CellState::EvictedEarlier;
}

// ---- colour scale ------------------------------------------------------------------------------

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

}  // namespace attnlab
