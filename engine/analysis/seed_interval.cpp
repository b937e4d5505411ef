#include "analysis/seed_interval.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

double studentT975(int df) {
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return std::nan("");
  if (df <= 30) return table[df - 1];
  // t = z + (z^3 + z) / (4 df) + (5 z^5 + 16 z^3 + 3 z) / (96 df^2): within 1e-3 of the exact quantile from df 30 on
  const double z = 1.959964, d = df;
  return z + (z * z * z + z) / (4 * d) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

SeedInterval seedInterval95(const std::vector<double>& values, ValueRange range) {
  SeedInterval r;
  double sum = 0;
  for (double v : values) std::isfinite(v) ? (sum += v, ++r.n) : ++r.skipped;
  if (r.n == 0) {
    r.mean = r.low = r.high = std::nan("");
    return r;
  }
  r.mean = sum / r.n;
  r.low = r.high = r.mean;
  if (r.n < 2) return r;
  double squares = 0;
  for (double v : values)
    if (std::isfinite(v)) squares += (v - r.mean) * (v - r.mean);
  const double half = studentT975(r.n - 1) * std::sqrt(squares / (r.n - 1)) / std::sqrt(static_cast<double>(r.n));
  r.low = std::max(range.lowest, r.mean - half);
  r.high = std::min(range.highest, r.mean + half);
  return r;
}

ShareInterval wilsonInterval95(int successes, int trials) {
  ShareInterval r{successes, trials, std::nan(""), std::nan(""), std::nan("")};
  if (trials <= 0 || successes < 0 || successes > trials) return r;
  // The p whose normal test at z just accepts k / n: (p + z^2 / 2n -+ z sqrt(p(1-p)/n + z^2 / 4n^2)) / (1 + z^2 / n)
  const double z = 1.959964, n = trials, p = successes / n, shrink = 1 + z * z / n;
  const double centre = (p + z * z / (2 * n)) / shrink;
  const double half = z / shrink * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  r.share = p;
  r.low = std::max(0.0, centre - half);
  r.high = std::min(1.0, centre + half);
  return r;
}

}  // namespace attnlab
