#include "selection_link.h"

#include <algorithm>

#include "attention_map_model.h"

namespace attnlab {

void SelectionLink::add(AttentionMapModel* map) {
  maps_.push_back({map, true});
  const size_t index = maps_.size() - 1;
  connect(map, &AttentionMapModel::shapeChanged, this, [this, index] {
    maps_[index].reshaped = true;
    emit shapeChanged();
  });
  connect(map, &AttentionMapModel::mapChanged, this, [this, index] { followMap(maps_[index]); });
  if (map->hasMap()) followMap(maps_.back());
}

void SelectionLink::followMap(Linked& linked) {
  if (applying_ || !linked.map->hasMap()) return;
  AttentionMapModel* map = linked.map;
  if (linked.reshaped) {  // a new or reshaped map: it takes the shared selection, whatever it fell back to
    linked.reshaped = false;
    apply(map);
    return;
  }
  const bool hasShared = layer_ < map->layerCount() && head_ < map->headCount(layer_);
  const bool moved = map->selectedLayer() != layer_ || map->selectedHead() != head_;
  if (moved && hasShared) select(map->selectedLayer(), map->selectedHead());  // the user chose in this map
}

void SelectionLink::select(int layer, int head) {
  if (layer < 0 || head < 0) return;
  const bool changed = layer != layer_ || head != head_;
  layer_ = layer;
  head_ = head;
  for (Linked& linked : maps_) apply(linked.map);
  if (changed) emit selectionChanged(layer_, head_);
}

void SelectionLink::apply(AttentionMapModel* map) {
  if (map->layerCount() == 0) return;
  const int layer = std::min(layer_, map->layerCount() - 1);
  const int head = std::min(head_, map->headCount(layer) - 1);
  applying_ = true;
  map->select(layer, head);
  applying_ = false;
}

int SelectionLink::maxLayers() const {
  int most = 0;
  for (const Linked& l : maps_) most = std::max(most, l.map->layerCount());
  return most;
}

int SelectionLink::maxHeads(int layer) const {
  int most = 0;
  for (const Linked& l : maps_) most = std::max(most, l.map->headCount(layer));
  return most;
}

QString SelectionLink::note(const AttentionMapModel* map) const {
  if (!map->hasMap()) return {};
  if (layer_ >= map->layerCount())
    return tr("this model has %1 layers: showing layer %2").arg(map->layerCount()).arg(map->selectedLayer() + 1);
  if (head_ >= map->headCount(layer_))
    return tr("this model has %1 heads: showing head %2").arg(map->headCount(layer_)).arg(map->selectedHead() + 1);
  return {};
}

}  // namespace attnlab
