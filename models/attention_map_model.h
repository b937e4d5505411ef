#pragma once
// The latest probe trace and which layer/head the views show. Holds the trace immutably
// (shared with the worker that produced it); views read one map through the accessors below.
#include <QImage>
#include <QObject>
#include <QString>
#include <memory>

#include "snapshots.h"

namespace attnlab {

class AttentionMapModel : public QObject {
  Q_OBJECT
 public:
  // How weights map to the colour ramp: linearly up to the map's largest weight, or by decades
  // (log10) over kLogDecades below it, so small weights are told apart.
  enum class ColourScale { Linear, Log };
  static constexpr int kLogDecades = 4;

  using QObject::QObject;

  // Keeps the selected layer/head when it still exists, else falls back to layer 0, head 0.
  void setTrace(std::shared_ptr<const TraceSnapshot> snapshot);
  void clear();
  // Ignored when (layer, head) does not exist in the current trace.
  void select(int layer, int head);

  bool hasMap() const;
  const TraceSnapshot* snapshot() const { return snapshot_.get(); }
  int step() const { return snapshot_ ? snapshot_->step : 0; }
  int layerCount() const;
  int headCount(int layer) const;
  int selectedLayer() const { return layer_; }
  int selectedHead() const { return head_; }
  QString variant() const;  // attention variant of the selected layer

  // The selected map, [size x size], rows are queries and columns keys.
  int size() const;
  float weight(int query, int key) const;
  float score(int query, int key) const;  // NaN when the trace recorded no scores
  bool isMasked(int query, int key) const;  // the key was not visible (score -inf), not merely weight 0
  float maxWeight() const { return maxWeight_; }
  // The KV-cache hook: true where the snapshot marks (query, key) evicted for the selected head.
  bool isEvicted(int query, int key) const { return isEvicted(layer_, head_, query, key); }
  bool isEvicted(int layer, int head, int query, int key) const;
  // True when the head is switched off (head gain 0) in the model the trace came from.
  bool isSwitchedOff(int layer, int head) const;
  // Token text at `position`, with blanks made visible.
  QString tokenLabel(int position) const;

  // Any head's map, [size x size] (the selected accessors above read the selected head).
  const HeadTrace* head(int layer, int head) const;
  float maxWeight(int layer, int head) const;

  ColourScale colourScale() const { return scale_; }
  void setColourScale(ColourScale scale);
  // Where `weight` sits on the colour ramp, 0..1, for a map whose largest weight is `top`.
  double rampPosition(double weight, double top) const;
  // One pixel per cell, coloured by rampPosition, masked cells kMaskedColour. Null image when
  // the head does not exist.
  QImage mapImage(int layer, int head) const;
  static constexpr QRgb kMaskedColour = 0xffe2e2e2;  // light grey, off the ramp

 signals:
  void shapeChanged();  // the number of layers or heads changed (or the trace was cleared)
  void mapChanged();    // a new trace, a new selection or a new colour scale

 private:
  const HeadTrace& selected() const;
  void updateMaxWeight();

  std::shared_ptr<const TraceSnapshot> snapshot_;
  int layer_ = 0;
  int head_ = 0;
  float maxWeight_ = 0;
  ColourScale scale_ = ColourScale::Linear;
};

}  // namespace attnlab
