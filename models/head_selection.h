#pragma once
// Which layer, head and query the views of one run show. It sits beside the AttentionMapModel as
// QItemSelectionModel sits beside its model: the map holds the trace, this holds the choice, and
// every view of the run reads and writes the same object (the comparison window links one per
// run through SelectionLink). A choice that does not exist in the map is ignored; when a new
// trace no longer has the chosen head, the selection falls back to layer 0, head 0 (and a query
// past the new probe's end is cleared).
#include <QObject>

#include "attention_map_model.h"

namespace attnlab {

class HeadSelection : public QObject {
  Q_OBJECT
 public:
  // Connects to `map` first, so the selection is valid again before any view hears of a new trace.
  explicit HeadSelection(const AttentionMapModel* map, QObject* parent = nullptr);

  const AttentionMapModel* map() const { return map_; }
  int layer() const { return layer_; }
  int head() const { return head_; }
  int query() const { return query_; }  // -1: no query chosen
  HeadMap shown() const { return map_->headMap(layer_, head_); }  // the selected head's map

  void select(int layer, int head);  // ignored when (layer, head) does not exist in the map
  void selectQuery(int query);       // -1 clears; ignored past the probe's end

 signals:
  void headChanged();   // the layer or head changed
  void queryChanged();  // the query changed

 private:
  void followMap();

  const AttentionMapModel* map_;
  int layer_ = 0, head_ = 0, query_ = -1;
};

}  // namespace attnlab
