#pragma once
// The latest probe trace and which layer/head the views show. Holds the trace immutably
// (shared with the worker that produced it); views read one map through the accessors below.
#include <QObject>
#include <QString>
#include <memory>

#include "snapshots.h"

namespace attnlab {

class AttentionMapModel : public QObject {
  Q_OBJECT
 public:
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
  // Token text at `position`, with blanks made visible.
  QString tokenLabel(int position) const;

 signals:
  void shapeChanged();  // the number of layers or heads changed (or the trace was cleared)
  void mapChanged();    // a new trace or a new selection

 private:
  const HeadTrace& selected() const;
  void updateMaxWeight();

  std::shared_ptr<const TraceSnapshot> snapshot_;
  int layer_ = 0;
  int head_ = 0;
  float maxWeight_ = 0;
};

}  // namespace attnlab
