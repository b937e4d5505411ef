#include "head_selection.h"

namespace attnlab {

HeadSelection::HeadSelection(const AttentionMapModel* map, QObject* parent) : QObject(parent), map_(map) {
  connect(map_, &AttentionMapModel::mapChanged, this, &HeadSelection::followMap);
}

void HeadSelection::followMap() {
  const bool headGone = layer_ >= map_->layerCount() || head_ >= map_->headCount(layer_);
  const bool queryGone = query_ >= 0 && query_ >= shown().size();
  if (headGone && (layer_ != 0 || head_ != 0)) {
    layer_ = head_ = 0;
    emit headChanged();
  }
  if ((headGone || queryGone) && query_ >= 0) {
    query_ = -1;
    emit queryChanged();
  }
}

void HeadSelection::select(int layer, int head) {
  if (layer < 0 || layer >= map_->layerCount() || head < 0 || head >= map_->headCount(layer)) return;
  if (layer == layer_ && head == head_) return;
  layer_ = layer;
  head_ = head;
  emit headChanged();
}

void HeadSelection::selectQuery(int query) {
  if (query >= shown().size()) return;
  if (query < 0) query = -1;
  if (query == query_) return;
  query_ = query;
  emit queryChanged();
}

}  // namespace attnlab
