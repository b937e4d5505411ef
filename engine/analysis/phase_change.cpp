#include "analysis/phase_change.h"

#include <algorithm>
#include <cmath>

namespace attnlab {
namespace {

std::vector<double> movingAverage(const std::vector<double>& v, int half) {
  const int n = static_cast<int>(v.size());
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i) {
    const int lo = std::max(0, i - half), hi = std::min(n - 1, i + half);
    double sum = 0;
    for (int k = lo; k <= hi; ++k) sum += v[k];
    out[i] = sum / (hi - lo + 1);
  }
  return out;
}

// The first step at which `smooth` reaches `level` (>= its first value), interpolated between measured steps.
double firstCrossing(const std::vector<double>& steps, const std::vector<double>& smooth, double level) {
  for (size_t i = 1; i < smooth.size(); ++i)
    if (smooth[i] >= level) {
      const double below = smooth[i - 1], above = smooth[i];
      const double t = above > below ? (level - below) / (above - below) : 1.0;
      return steps[i - 1] + std::clamp(t, 0.0, 1.0) * (steps[i] - steps[i - 1]);
    }
  return steps.back();
}

std::string checkCurve(const std::vector<double>& steps, const std::vector<double>& values) {
  if (steps.size() != values.size()) return "the curve has " + std::to_string(steps.size()) + " steps but " + std::to_string(values.size()) + " values";
  if (steps.size() < 3) return "a phase change needs at least 3 points, the curve has " + std::to_string(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!std::isfinite(steps[i]) || !std::isfinite(values[i])) return "point " + std::to_string(i) + " is not finite";
    if (i > 0 && steps[i] <= steps[i - 1]) return "steps must increase (point " + std::to_string(i) + ")";
  }
  return {};
}

}  // namespace

PhaseChange detectPhaseChange(const std::vector<double>& steps, const std::vector<double>& values, const PhaseChangeRule& rule) {
  PhaseChange out;
  out.error = checkCurve(steps, values);
  if (!out.error.empty()) return out;
  const std::vector<double> smooth = movingAverage(values, std::max(0, rule.half_window));
  out.start = smooth.front();
  out.plateau = *std::max_element(smooth.begin(), smooth.end());
  out.rise = out.plateau - out.start;
  if (out.rise < rule.margin) return out;
  out.found = true;
  out.step = firstCrossing(steps, smooth, out.start + 0.5 * out.rise);
  out.width = firstCrossing(steps, smooth, out.start + 0.75 * out.rise) - firstCrossing(steps, smooth, out.start + 0.25 * out.rise);
  return out;
}

}  // namespace attnlab
