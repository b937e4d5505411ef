#include "analysis/pareto_front.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {
bool dominates(const CostLoss& a, const CostLoss& b) {
  return a.cost <= b.cost && a.loss <= b.loss && (a.cost < b.cost || a.loss < b.loss);
}
}  // namespace

std::vector<int> paretoFront(const std::vector<CostLoss>& points) {
  std::vector<int> front;
  for (size_t i = 0; i < points.size(); ++i) {
    if (std::isnan(points[i].cost) || std::isnan(points[i].loss)) continue;
    bool beaten = false;
    for (size_t j = 0; j < points.size() && !beaten; ++j)
      beaten = j != i && !std::isnan(points[j].cost) && !std::isnan(points[j].loss) && dominates(points[j], points[i]);
    if (!beaten) front.push_back(static_cast<int>(i));
  }
  std::sort(front.begin(), front.end(), [&](int a, int b) {
    return points[a].cost != points[b].cost ? points[a].cost < points[b].cost : points[a].loss < points[b].loss;
  });
  return front;
}

}  // namespace attnlab
