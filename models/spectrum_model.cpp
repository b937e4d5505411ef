#include "spectrum_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace attnlab {

namespace {

// Layers and heads per layer, from the heads every snapshot lists.
std::vector<int> shapeOf(const SpectrumSeries* series) {
  std::vector<int> heads;
  if (!series) return heads;
  for (const auto& snapshot : series->snapshots)
    for (const HeadSpectrum& h : snapshot->heads) {
      if (h.layer >= static_cast<int>(heads.size())) heads.resize(h.layer + 1, 0);
      heads[h.layer] = std::max(heads[h.layer], h.head + 1);
    }
  return heads;
}

void checkUnique(const SpectrumSeries& series) {
  for (const auto& snapshot : series.snapshots) {
    std::set<std::pair<int, int>> seen;
    for (const HeadSpectrum& h : snapshot->heads)
      if (h.layer < 0 || h.head < 0 || !seen.insert({h.layer, h.head}).second)
        throw std::invalid_argument("spectra: snapshot at step " + std::to_string(snapshot->step) + " lists layer " +
                                    std::to_string(h.layer) + " head " + std::to_string(h.head) +
                                    (h.layer < 0 || h.head < 0 ? " (negative)" : " twice"));
  }
}

}  // namespace

void SpectrumModel::setSeries(std::shared_ptr<const SpectrumSeries> series) {
  if (series) checkUnique(*series);
  const std::vector<int> shape = shapeOf(series.get());
  const bool reshaped = shape != headsPerLayer_ || snapshotCount() != (series ? int(series->snapshots.size()) : 0);
  const bool followLatest = snapshot_ + 1 >= snapshotCount();
  const int shownStep = step();
  series_ = std::move(series);
  headsPerLayer_ = shape;
  if (layer_ >= layerCount() || (head_ != kAllHeads && head_ >= headCount(layer_))) layer_ = head_ = 0;
  snapshot_ = std::max(0, snapshotCount() - 1);
  if (!followLatest)
    while (snapshot_ > 0 && series_->snapshots[snapshot_]->step > shownStep) --snapshot_;
  if (reshaped) emit shapeChanged();
  emit spectrumChanged();
}

void SpectrumModel::select(int layer, int head) {
  if (layer < 0 || layer >= layerCount() || head < kAllHeads || head >= headCount(layer)) return;
  if (layer == layer_ && head == head_) return;
  layer_ = layer;
  head_ = head;
  emit spectrumChanged();
}

void SpectrumModel::setSnapshot(int index) {
  index = std::clamp(index, 0, std::max(0, snapshotCount() - 1));
  if (index == snapshot_) return;
  snapshot_ = index;
  emit spectrumChanged();
}

int SpectrumModel::layerCount() const { return static_cast<int>(headsPerLayer_.size()); }

int SpectrumModel::headCount(int layer) const {
  return layer >= 0 && layer < layerCount() ? headsPerLayer_[layer] : 0;
}

int SpectrumModel::step() const { return hasData() ? series_->snapshots[snapshot_]->step : 0; }

std::vector<int> SpectrumModel::shownHeads() const {
  std::vector<int> heads;
  if (!hasData()) return heads;
  if (head_ != kAllHeads) return {head_};
  for (int h = 0; h < headCount(layer_); ++h) heads.push_back(h);
  return heads;
}

const HeadSpectrum* SpectrumModel::find(const std::vector<HeadSpectrum>& heads, int head) const {
  for (const HeadSpectrum& h : heads)
    if (h.layer == layer_ && h.head == head) return &h;
  return nullptr;
}

const HeadSpectrum* SpectrumModel::shown(int head) const {
  return hasData() ? find(series_->snapshots[snapshot_]->heads, head) : nullptr;
}

QPointF logRadiusPoint(std::complex<double> z, double nullRadius) {
  const double r = std::abs(z);
  if (!(r > 0) || !(nullRadius > 0)) return QPointF(0, 0);
  const double drawn = std::log2(1 + r / nullRadius);
  return QPointF(z.real() / r * drawn, z.imag() / r * drawn);
}

QPointF SpectrumModel::planePoint(std::complex<double> z) const {
  return logRadius() ? logRadiusPoint(z, nullRadius()) : QPointF(z.real(), z.imag());
}

QList<QPointF> SpectrumModel::eigenvaluePoints(int head) const {
  QList<QPointF> points;
  if (const HeadSpectrum* h = shown(head))
    for (const auto& z : h->eigenvalues) points.append(planePoint(z));
  return points;
}

QList<QPointF> SpectrumModel::nullDrawPoints(int head) const {
  QList<QPointF> points;
  if (const HeadSpectrum* h = series_ ? find(series_->nullDraw, head) : nullptr)
    for (const auto& z : h->eigenvalues) points.append(planePoint(z));
  return points;
}

double SpectrumModel::spectralRadius(int head) const {
  double radius = 0;
  if (const HeadSpectrum* h = shown(head))
    for (const auto& z : h->eigenvalues) radius = std::max(radius, std::abs(z));
  return radius;
}

double SpectrumModel::drawnNullRadius() const { return logRadius() ? 1.0 : nullRadius(); }

void SpectrumModel::setPlaneScale(PlaneScale scale) {
  if (scale == scale_) return;
  scale_ = scale;
  emit spectrumChanged();
}

bool SpectrumModel::logRadius() const {
  if (scale_ != PlaneScale::Automatic || !(nullRadius() > 0)) return scale_ == PlaneScale::Log && nullRadius() > 0;
  return nullRadius() < kLogBelow * linearExtent();
}

QList<QPointF> SpectrumModel::singularValuePoints(int head) const {
  QList<QPointF> points;
  if (const HeadSpectrum* h = shown(head))
    for (size_t i = 0; i < h->singularValues.size(); ++i) points.append(QPointF(double(i + 1), h->singularValues[i]));
  return points;
}

QList<QPointF> SpectrumModel::ropePhasePoints(int head) const {
  QList<QPointF> points;
  if (const HeadSpectrum* h = shown(head))
    for (size_t i = 0; i < h->rope.size(); ++i) points.append(QPointF(double(i), h->rope[i].phase));
  return points;
}

QList<QPointF> SpectrumModel::ropeMagnitudePoints(int head) const {
  QList<QPointF> points;
  if (const HeadSpectrum* h = shown(head))
    for (size_t i = 0; i < h->rope.size(); ++i) points.append(QPointF(double(i), h->rope[i].magnitude));
  return points;
}

std::vector<SpectrumModel::Numbers> SpectrumModel::numbers() const {
  std::vector<Numbers> out;
  for (int head : shownHeads())
    if (const HeadSpectrum* h = shown(head)) out.push_back({head, h->skewEnergyShare, h->nonNormality});
  return out;
}

bool SpectrumModel::usesRope() const {
  for (int head : shownHeads())
    if (const HeadSpectrum* h = shown(head); h && !h->rope.empty()) return true;
  return false;
}

bool SpectrumModel::isShown(const HeadSpectrum& h) const {
  return h.layer == layer_ && (head_ == kAllHeads || h.head == head_);
}

std::vector<const HeadSpectrum*> SpectrumModel::rangeHeads() const {
  std::vector<const HeadSpectrum*> heads;
  if (!hasData()) return heads;
  for (int i = 0; i < snapshotCount(); ++i) {
    if (fit_ && i != snapshot_) continue;
    for (const HeadSpectrum& h : series_->snapshots[i]->heads)
      if (isShown(h)) heads.push_back(&h);
  }
  return heads;
}

void SpectrumModel::setFitToSnapshot(bool fit) {
  if (fit == fit_) return;
  fit_ = fit;
  emit spectrumChanged();
}

std::vector<const HeadSpectrum*> SpectrumModel::planeHeads() const {
  std::vector<const HeadSpectrum*> heads = rangeHeads();
  if (series_)
    for (const HeadSpectrum& h : series_->nullDraw)
      if (isShown(h)) heads.push_back(&h);
  return heads;
}

double SpectrumModel::linearExtent() const {
  double extent = nullSymmetric() ? 0 : nullRadius();
  for (const HeadSpectrum* h : planeHeads())
    for (const auto& z : h->eigenvalues) extent = std::max({extent, std::abs(z.real()), std::abs(z.imag())});
  return extent > 0 ? extent * 1.1 : 1.0;
}

double SpectrumModel::planeExtent() const {
  if (!logRadius()) return linearExtent();
  double extent = nullSymmetric() ? 0 : 1.0;  // the null disk's drawn radius
  for (const HeadSpectrum* h : planeHeads())
    for (const auto& z : h->eigenvalues) {
      const QPointF p = logRadiusPoint(z, nullRadius());
      extent = std::max({extent, std::abs(p.x()), std::abs(p.y())});
    }
  return extent > 0 ? extent * 1.1 : 1.0;
}

double SpectrumModel::maxSingularValue() const {
  double top = 0;
  for (const HeadSpectrum* h : rangeHeads())
    for (double s : h->singularValues) top = std::max(top, s);
  return top;
}

double SpectrumModel::maxRopeMagnitude() const {
  double top = 0;
  for (const HeadSpectrum* h : rangeHeads())
    for (const RopePhase& r : h->rope) top = std::max(top, r.magnitude);
  return top;
}

int SpectrumModel::maxRank() const {
  size_t rank = 0;
  for (const HeadSpectrum* h : rangeHeads()) rank = std::max(rank, h->singularValues.size());
  return static_cast<int>(rank);
}

}  // namespace attnlab
