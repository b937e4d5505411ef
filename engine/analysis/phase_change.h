#pragma once
// The step of a phase change in a curve measured over training (the induction score rising as
// induction heads form). The rule, stated once here and in the study's report:
//  1. smooth the curve with a centred moving average over 2 * half_window + 1 points (truncated at
//     the ends), so one noisy measurement neither makes nor hides a change;
//  2. start = the smoothed first point, plateau = the smoothed curve's highest value, rise = plateau - start;
//  3. no phase change when the rise is below `margin` (in the curve's own units);
//  4. otherwise the phase-change step is where the smoothed curve first reaches start + rise / 2,
//     interpolated linearly between the two measured steps around it, and the width is the steps
//     between its first reaching 25% and 75% of the rise (how abrupt the change is; the middle half
//     of the rise, so a small early bump or a slow creep to the plateau does not stretch it).
// A falling curve (a loss) is checked by negating it.
#include <string>
#include <vector>

namespace attnlab {

struct PhaseChangeRule {
  double margin = 0.2;  // the least rise that counts as a change
  int half_window = 1;  // smoothing: 2 * half_window + 1 points
};

struct PhaseChange {
  bool found = false;
  double step = 0;   // halfway crossing (when found)
  double width = 0;  // steps from 25% to 75% of the rise (when found)
  double start = 0, plateau = 0, rise = 0;  // of the smoothed curve (always, for a valid curve)
  std::string error;  // non-empty: the curve could not be read (sizes differ, too few points, steps not increasing, a value not finite)
};

PhaseChange detectPhaseChange(const std::vector<double>& steps, const std::vector<double>& values, const PhaseChangeRule& rule = {});

}  // namespace attnlab
