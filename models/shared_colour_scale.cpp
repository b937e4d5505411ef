#include "shared_colour_scale.h"

#include <algorithm>

#include "head_selection.h"

namespace attnlab {

void SharedColourScale::add(const HeadSelection* run) {
  runs_.push_back(run);
  connect(run->map(), &AttentionMapModel::mapChanged, this, &SharedColourScale::changed);
  connect(run, &HeadSelection::headChanged, this, &SharedColourScale::changed);
  emit changed();
}

void SharedColourScale::setShared(bool shared) {
  if (shared == shared_) return;
  shared_ = shared;
  emit changed();
}

double SharedColourScale::top(const HeadSelection* run) const {
  if (!shared_) return run->shown().maxWeight();
  double top = 0;
  for (const HeadSelection* r : runs_) top = std::max<double>(top, r->shown().maxWeight());
  return top;
}

}  // namespace attnlab
