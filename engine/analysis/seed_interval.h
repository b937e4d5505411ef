#pragma once
// Mean and 95% confidence interval of a quantity measured once per seed (independent runs), as the
// studies report them: mean +- t_{0.975, n-1} * s / sqrt(n), s the sample standard deviation.
// Values that are not finite (a run that diverged) are left out and counted.
// A share of cases (k of n runs in which something held) gets Wilson's score interval instead: it
// stays inside [0, 1] and keeps a width at 0 of n and n of n, where mean +- t s / sqrt(n) does not.
#include <cmath>
#include <vector>

namespace attnlab {

struct SeedInterval {
  int n = 0;        // finite values used
  int skipped = 0;  // values left out (NaN or infinite)
  double mean = 0, low = 0, high = 0;  // NaN without values; low = high = mean for one value (no spread known)
  bool hasSpread() const { return n >= 2; }
};

// Student's t quantile t_{0.975, df} for df >= 1 (table to 30, the Cornish-Fisher expansion above).
double studentT975(int degreesOfFreedom);
// The range a quantity cannot leave (an accuracy, a share, a score of attention weights: 0 to 1; a
// difference of two: -1 to 1). Its interval is cut there, where mean +- t s / sqrt(n) of a few seeds
// would pass it (0.77 [0.24, 1.29] for an accuracy); the true mean lies inside, so coverage is kept.
struct ValueRange {
  double lowest = -INFINITY, highest = INFINITY;
};
inline constexpr ValueRange kUnbounded{}, kShareRange{0, 1}, kDifferenceRange{-1, 1};
SeedInterval seedInterval95(const std::vector<double>& values, ValueRange range = kUnbounded);

struct ShareInterval {
  int successes = 0, trials = 0;
  double share = 0, low = 0, high = 0;  // NaN without trials
};
// Wilson's 95% score interval for `successes` of `trials` (0 <= successes <= trials).
ShareInterval wilsonInterval95(int successes, int trials);

}  // namespace attnlab
