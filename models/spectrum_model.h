#pragma once
// The QK spectra of every head over training snapshots, and which layer, head(s) and
// snapshot the spectra view shows. The input structs are plain; an adapter fills them from the
// analysis' QkSpectrum / GinibreNull / qkSpectrumSeries. The model owns the choices and the chart
// ranges (fixed over all snapshots, so motion during training is visible and not rescaled away).
#include <QList>
#include <QObject>
#include <QPointF>
#include <QString>
#include <complex>
#include <limits>
#include <memory>
#include <vector>

namespace attnlab {

struct RopePhase {
  double frequency = 0;  // theta_m, radians per position
  double magnitude = 0;  // |z_m|: how much the pair contributes
  double phase = 0;      // arg z_m in (-pi, pi]
};

struct HeadSpectrum {
  int layer = 0, head = 0;
  std::vector<std::complex<double>> eigenvalues;  // nonzero eigenvalues of W_q^T W_k
  std::vector<double> singularValues;             // descending
  double skewEnergyShare = std::numeric_limits<double>::quiet_NaN();  // ||A||^2 / ||M||^2
  double nonNormality = std::numeric_limits<double>::quiet_NaN();     // Henrici departure, relative
  std::vector<RopePhase> rope;                    // empty without RoPE
};

struct SpectrumSnapshot {
  int step = 0;
  std::vector<HeadSpectrum> heads;  // every head of every layer, any order
};

struct SpectrumSeries {
  // In training order; shared, so a growing history is republished without copying its frames.
  std::vector<std::shared_ptr<const SpectrumSnapshot>> snapshots;
  double nullRadius = 0;       // Ginibre circular-law radius at the initial scale
  bool nullSymmetric = false;  // queries are keys: the null is real, not a disk
  std::vector<HeadSpectrum> nullDraw;  // eigenvalues of each head in a freshly initialised model
};

// Where the plane draws eigenvalue z on a log-radius scale: at angle arg z and radius
// log2(1 + |z| / nullRadius), so the null disk's edge is radius 1 and a spectrum a hundred times
// wider sits near 6.7: both in view at once. 0 stays 0.
QPointF logRadiusPoint(std::complex<double> z, double nullRadius);

class SpectrumModel : public QObject {
  Q_OBJECT
 public:
  static constexpr int kAllHeads = -1;
  // How the complex plane scales radii. Automatic (the default): log once the linear plane would
  // shrink the null disk below kLogBelow of its half-width (a trained spectrum hides the null).
  enum class PlaneScale { Automatic, Linear, Log };
  static constexpr double kLogBelow = 0.2;
  struct Numbers {
    int head = 0;
    double skewEnergyShare = 0, nonNormality = 0;
  };

  using QObject::QObject;

  // Keeps layer/head when they still exist. Shows the last snapshot when the last (or none) was
  // shown, so a live history follows training; else stays on the shown step (or the latest one
  // before it), so moving through the history is not interrupted. Throws std::invalid_argument
  // when a snapshot lists a head twice.
  void setSeries(std::shared_ptr<const SpectrumSeries> series);
  void select(int layer, int head);  // head kAllHeads overlays every head of the layer; ignored if out of range
  void setSnapshot(int index);       // clamped to the available snapshots
  // Off (the default): chart ranges hold every snapshot, so motion shows. On: they fit the shown
  // snapshot, to see small early spectra beside the null disk.
  void setFitToSnapshot(bool fit);
  bool fitToSnapshot() const { return fit_; }
  void setPlaneScale(PlaneScale scale);
  PlaneScale planeScale() const { return scale_; }
  bool logRadius() const;  // the plane is drawn on the log-radius scale now (chosen or automatic)

  bool hasData() const { return series_ && !series_->snapshots.empty(); }
  int layerCount() const;
  int headCount(int layer) const;
  int snapshotCount() const { return series_ ? static_cast<int>(series_->snapshots.size()) : 0; }
  int selectedLayer() const { return layer_; }
  int selectedHead() const { return head_; }
  int snapshotIndex() const { return snapshot_; }
  int step() const;  // training step of the shown snapshot

  // The heads shown (one, or every head of the layer), ascending.
  std::vector<int> shownHeads() const;
  // Eigenvalues of `head` in the shown snapshot as drawn: (re, im), or logRadiusPoint under
  // logRadius(); empty when the head is absent.
  QList<QPointF> eigenvaluePoints(int head) const;
  QList<QPointF> nullDrawPoints(int head) const;
  double drawnNullRadius() const;
  double spectralRadius(int head) const;  // max |eigenvalue| of `head` in the shown snapshot (0 when absent)  // the null disk's radius as drawn: 1 under logRadius()
  // (rank 1.., sigma) for the singular values chart.
  QList<QPointF> singularValuePoints(int head) const;
  // (pair index 0.., phase) and (pair index, |z|) per rotated pair; empty without RoPE.
  QList<QPointF> ropePhasePoints(int head) const;
  QList<QPointF> ropeMagnitudePoints(int head) const;
  double maxRopeMagnitude() const;  // over the ranges' heads
  std::vector<Numbers> numbers() const;  // per shown head
  bool usesRope() const;
  double nullRadius() const { return series_ ? series_->nullRadius : 0; }
  bool nullSymmetric() const { return series_ && series_->nullSymmetric; }
  // Half-width of the square complex-plane view that holds every eigenvalue of the shown heads in
  // every snapshot (or the shown one, see setFitToSnapshot), the null disk and the draw, with a margin.
  double planeExtent() const;
  double maxSingularValue() const;  // over the shown heads and all snapshots (or the shown one)
  int maxRank() const;              // most singular values any shown head has

 signals:
  void shapeChanged();     // layers, heads or snapshot count changed
  void spectrumChanged();  // new series, selection or snapshot

 private:
  const HeadSpectrum* find(const std::vector<HeadSpectrum>& heads, int head) const;
  const HeadSpectrum* shown(int head) const;
  bool isShown(const HeadSpectrum& h) const;
  // The shown heads in every snapshot the ranges cover.
  std::vector<const HeadSpectrum*> rangeHeads() const;
  std::vector<const HeadSpectrum*> planeHeads() const;  // rangeHeads() and the shown null draws
  double linearExtent() const;  // planeExtent() on linear axes
  QPointF planePoint(std::complex<double> z) const;

  std::shared_ptr<const SpectrumSeries> series_;
  std::vector<int> headsPerLayer_;
  int layer_ = 0;
  int head_ = 0;
  int snapshot_ = 0;
  bool fit_ = false;
  PlaneScale scale_ = PlaneScale::Automatic;
};

}  // namespace attnlab
