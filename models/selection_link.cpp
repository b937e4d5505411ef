#include "selection_link.h"

#include <algorithm>

#include "head_selection.h"

namespace attnlab {

void SelectionLink::add(HeadSelection* selection) {
  maps_.push_back({selection, true});
  const size_t index = maps_.size() - 1;
  connect(selection->map(), &AttentionMapModel::shapeChanged, this, [this, index] {
    maps_[index].reshaped = true;
    emit shapeChanged();
  });
  connect(selection->map(), &AttentionMapModel::mapChanged, this, [this, index] { followMap(maps_[index]); });
  connect(selection, &HeadSelection::headChanged, this, [this, index] { followMap(maps_[index]); });
  connect(selection, &HeadSelection::queryChanged, this, [this, selection] { shareQuery(selection); });
  if (selection->map()->hasMap()) followMap(maps_.back());
}

void SelectionLink::followMap(Linked& linked) {
  HeadSelection* run = linked.selection;
  if (applying_ || !run->map()->hasMap()) return;
  if (linked.reshaped) {  // a new or reshaped map: it takes the shared selection, whatever it fell back to
    linked.reshaped = false;
    apply(run);
    return;
  }
  const bool hasShared = layer_ < run->map()->layerCount() && head_ < run->map()->headCount(layer_);
  const bool moved = run->layer() != layer_ || run->head() != head_;
  if (moved && hasShared) select(run->layer(), run->head());  // the user chose in this run
}

void SelectionLink::select(int layer, int head) {
  if (layer < 0 || head < 0) return;
  const bool changed = layer != layer_ || head != head_;
  layer_ = layer;
  head_ = head;
  for (Linked& linked : maps_) apply(linked.selection);
  if (changed) emit selectionChanged(layer_, head_);
}

void SelectionLink::apply(HeadSelection* run) {
  const AttentionMapModel* map = run->map();
  if (map->layerCount() == 0) return;
  const int layer = std::min(layer_, map->layerCount() - 1);
  const int head = std::min(head_, map->headCount(layer) - 1);
  applying_ = true;
  run->select(layer, head);
  applying_ = false;
}

// A query chosen in one run is chosen in the others (where their probe is long enough).
void SelectionLink::shareQuery(const HeadSelection* from) {
  if (applying_) return;
  applying_ = true;
  for (Linked& linked : maps_)
    if (linked.selection != from) linked.selection->selectQuery(from->query());
  applying_ = false;
}

int SelectionLink::maxLayers() const {
  int most = 0;
  for (const Linked& l : maps_) most = std::max(most, l.selection->map()->layerCount());
  return most;
}

int SelectionLink::maxHeads(int layer) const {
  int most = 0;
  for (const Linked& l : maps_) most = std::max(most, l.selection->map()->headCount(layer));
  return most;
}

QString SelectionLink::note(const HeadSelection* run) const {
  const AttentionMapModel* map = run->map();
  if (!map->hasMap()) return {};
  if (layer_ >= map->layerCount())
    return tr("this model has %1 layers: showing layer %2").arg(map->layerCount()).arg(run->layer() + 1);
  if (head_ >= map->headCount(layer_))
    return tr("this model has %1 heads: showing head %2").arg(map->headCount(layer_)).arg(run->head() + 1);
  return {};
}

}  // namespace attnlab
