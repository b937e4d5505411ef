#pragma once
// Exactly zero attention weights among the visible ones, by query-key distance: the ALiBi underflow
// paper's blind spots, where a low-precision exponential of a large ALiBi penalty underflowed to 0 and
// the key stopped counting at all (attention/precision.h emulates the formats). A weight that is merely
// tiny is not counted: only what the format turned into 0.
#include <vector>

#include "core/tensor.h"

namespace attnlab {

// Counts over any number of maps, per distance bucket b holding distances [b * width, (b + 1) * width).
class ZeroWeightCounts {
 public:
  explicit ZeroWeightCounts(int bucketWidth);

  // Adds one head's map. A cell is visible where its score is not -inf (the mask's mark, model/trace.h);
  // its distance is |i - j|. Throws std::invalid_argument when the shapes differ.
  void add(const Mat& scores, const Mat& weights);

  int bucketWidth() const { return width_; }
  int buckets() const { return static_cast<int>(visible_.size()); }
  long visible(int bucket) const { return visible_[bucket]; }
  long zeros(int bucket) const { return zeros_[bucket]; }
  long totalVisible() const;
  long totalZeros() const;
  // zeros / visible in the bucket (NaN where nothing was visible), and over every bucket.
  double share(int bucket) const;
  double overallShare() const;

 private:
  int width_;
  std::vector<long> visible_, zeros_;
};

}  // namespace attnlab
