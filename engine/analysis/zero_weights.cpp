#include "analysis/zero_weights.h"

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>

namespace attnlab {

ZeroWeightCounts::ZeroWeightCounts(int bucketWidth) : width_(bucketWidth) {
  if (bucketWidth < 1) throw std::invalid_argument("zero-weight buckets need a width of at least 1, not " + std::to_string(bucketWidth));
}

void ZeroWeightCounts::add(const Mat& scores, const Mat& weights) {
  if (scores.rows() != weights.rows() || scores.cols() != weights.cols())
    throw std::invalid_argument("scores and weights differ in shape");
  for (Eigen::Index i = 0; i < weights.rows(); ++i)
    for (Eigen::Index j = 0; j < weights.cols(); ++j) {
      if (std::isinf(scores(i, j)) && scores(i, j) < 0) continue;  // masked: not a weight the head could give
      const size_t bucket = static_cast<size_t>(std::abs(i - j) / width_);
      if (bucket >= visible_.size()) visible_.resize(bucket + 1, 0), zeros_.resize(bucket + 1, 0);
      ++visible_[bucket];
      zeros_[bucket] += weights(i, j) == 0.0f;
    }
}

double ZeroWeightCounts::share(int bucket) const {
  return visible_[bucket] ? static_cast<double>(zeros_[bucket]) / visible_[bucket] : std::nan("");
}

long ZeroWeightCounts::totalVisible() const { return std::accumulate(visible_.begin(), visible_.end(), 0L); }
long ZeroWeightCounts::totalZeros() const { return std::accumulate(zeros_.begin(), zeros_.end(), 0L); }

double ZeroWeightCounts::overallShare() const {
  const long seen = totalVisible();
  return seen ? static_cast<double>(totalZeros()) / seen : std::nan("");
}

}  // namespace attnlab
