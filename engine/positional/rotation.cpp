#include <cmath>

#include "positional/positional.h"

namespace attnlab {
namespace {
// (x0, x1) <- (c x0 - s x1, s x0 + c x1): the pair turned by the angle whose cosine and sine these are.
inline void turnPair(float* pair, float c, float s) {
  const float x0 = pair[0], x1 = pair[1];
  pair[0] = c * x0 - s * x1;
  pair[1] = s * x0 + c * x1;
}
}  // namespace

void rotatePairs(float* x, int rows, int dHead, const float* angles, int pairs, bool inverse) {
  const float sign = inverse ? -1.0f : 1.0f;
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<size_t>(r) * dHead;
    const float* a = angles + static_cast<size_t>(r) * pairs;
    for (int m = 0; m < pairs; ++m) turnPair(row + 2 * m, std::cos(a[m]), sign * std::sin(a[m]));
  }
}

void rotatePairsBy(float* x, int rows, int dHead, const float* cosines, const float* sines, int pairs) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<size_t>(r) * dHead;
    const float* c = cosines + static_cast<size_t>(r) * pairs;
    const float* s = sines + static_cast<size_t>(r) * pairs;
    for (int m = 0; m < pairs; ++m) turnPair(row + 2 * m, c[m], s[m]);
  }
}

void rotationAngleGrad(const float* dy, const float* y, int rows, int dHead, int pairs, float* dAngles) {
  for (int r = 0; r < rows; ++r) {
    const float* g = dy + static_cast<size_t>(r) * dHead;
    const float* v = y + static_cast<size_t>(r) * dHead;
    float* da = dAngles + static_cast<size_t>(r) * pairs;
    // y0 = c x0 - s x1, y1 = s x0 + c x1  =>  dy0/da = -y1, dy1/da = y0
    for (int m = 0; m < pairs; ++m) da[m] += -g[2 * m] * v[2 * m + 1] + g[2 * m + 1] * v[2 * m];
  }
}

}  // namespace attnlab
