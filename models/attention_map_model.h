#pragma once
// The latest probe trace of a run. Holds the trace immutably (shared with the worker that produced
// it); views read one head's map through headMap(). Which head they show is not kept here but in
// the HeadSelection beside this model.
#include <QObject>
#include <QString>
#include <memory>

#include "kv_cache_model.h"
#include "snapshots.h"

namespace attnlab {

class AttentionMapModel;

// One head's map, [size x size], rows are queries and columns keys; a map of a head that does not
// exist has size 0. A small value: take a fresh one after the model changes. weight, score and
// isMasked read the trace unchecked: call them for 0 <= query, key < size() only.
class HeadMap {
 public:
  HeadMap(const AttentionMapModel* model, int layer, int head);

  int layer() const { return layer_; }
  int head() const { return head_; }
  int size() const;
  float weight(int query, int key) const;
  float score(int query, int key) const;     // NaN when the trace recorded no scores
  bool isMasked(int query, int key) const;   // the key was not visible (score -inf), not merely weight 0
  float maxWeight() const;                   // the largest finite weight (0 without a map)
  QString variant() const;                   // attention variant of the head's layer
  // True where the KV cache had evicted `key` when `query` was decoded (AttentionMapModel::setEvictions).
  bool isEvicted(int query, int key) const;

 private:
  const AttentionMapModel* model_;
  const HeadTrace* trace_;  // null when the head does not exist
  int layer_, head_;
};

class AttentionMapModel : public QObject {
  Q_OBJECT
 public:
  // How weights map to the colour ramp: linearly up to the map's largest weight, or by decades
  // (log10) over kLogDecades below it, so small weights are told apart.
  enum class ColourScale { Linear, Log };
  static constexpr int kLogDecades = 4;

  using QObject::QObject;

  void setTrace(std::shared_ptr<const TraceSnapshot> snapshot);
  void clear();

  // Marks, on the maps, the keys that run `run` of a KV-cache generation had evicted when each
  // query was decoded (the KV view hands over its result). The marks show only while the trace
  // is of the same model step and its tokens are that generation's prompt; null removes them.
  void setEvictions(std::shared_ptr<const KvCacheResult> result, int run);
  bool hasEvictions() const;
  QString evictionLabel() const;  // the run's policy and budget, e.g. "h2o, 8 per head"

  bool hasMap() const;  // some head of the trace has a map
  const TraceSnapshot* snapshot() const { return snapshot_.get(); }
  std::shared_ptr<const TraceSnapshot> sharedSnapshot() const { return snapshot_; }  // for work on another thread
  int step() const { return snapshot_ ? snapshot_->step : 0; }
  int layerCount() const;
  int headCount(int layer) const;
  HeadMap headMap(int layer, int head) const { return {this, layer, head}; }
  // True when the head is switched off (head gain 0) in the model the trace came from.
  bool isSwitchedOff(int layer, int head) const;
  // Where the model stands, for captions: "step 12", or an opened model's name.
  QString stageText() const;
  bool isOpenedModel() const;
  // Token text at `position`, with blanks made visible.
  QString tokenLabel(int position) const;

  // Any head's trace (null when it does not exist) and its largest finite weight.
  const HeadTrace* head(int layer, int head) const;
  float maxWeight(int layer, int head) const;
  bool isEvicted(int layer, int head, int query, int key) const;

  ColourScale colourScale() const { return scale_; }
  void setColourScale(ColourScale scale);
  // Where `weight` sits on the colour ramp, 0..1, for a map whose largest weight is `top`.
  double rampPosition(double weight, double top) const;

 signals:
  void shapeChanged();  // the number of layers or heads changed (or the trace was cleared)
  void mapChanged();    // a new trace or a new colour scale

 private:
  std::shared_ptr<const TraceSnapshot> snapshot_;
  std::shared_ptr<const KvCacheResult> evictions_;
  int evictionRun_ = 0;
  ColourScale scale_ = ColourScale::Linear;
};

}  // namespace attnlab
