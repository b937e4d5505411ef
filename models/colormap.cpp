#include "colormap.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace attnlab {

namespace {

constexpr int kSteps = 256;
constexpr double kPi = 3.14159265358979323846;

struct Rgb {
  double r, g, b;  // linear light, in gamut when all lie in [0, 1]
};

// OKLab -> linear sRGB (Bjorn Ottosson's published matrices).
Rgb oklabToLinearRgb(double L, double a, double b) {
  const double l = std::pow(L + 0.3963377774 * a + 0.2158037573 * b, 3);
  const double m = std::pow(L - 0.1055613458 * a - 0.0638541728 * b, 3);
  const double s = std::pow(L - 0.0894841775 * a - 1.2914855480 * b, 3);
  return {4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
          -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
          -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s};
}

bool inGamut(const Rgb& c) {
  const double eps = 1e-6;
  return c.r >= -eps && c.r <= 1 + eps && c.g >= -eps && c.g <= 1 + eps && c.b >= -eps && c.b <= 1 + eps;
}

int encodeSrgb(double linear) {
  const double x = std::clamp(linear, 0.0, 1.0);
  const double encoded = x <= 0.0031308 ? 12.92 * x : 1.055 * std::pow(x, 1 / 2.4) - 0.055;
  return static_cast<int>(std::lround(encoded * 255));
}

// Lightness rises linearly; the hue turns from violet (305 deg) down through blue and teal to
// yellow (105 deg); chroma is as wanted, reduced only where sRGB cannot show it.
QColor computeRampColor(double t) {
  const double lightness = 0.27 + 0.66 * t;
  const double hue = (305.0 - 200.0 * t) * kPi / 180.0;
  for (double chroma = 0.12 + 0.06 * t; chroma > 0; chroma -= 0.0005) {
    const Rgb c = oklabToLinearRgb(lightness, chroma * std::cos(hue), chroma * std::sin(hue));
    if (inGamut(c)) return QColor(encodeSrgb(c.r), encodeSrgb(c.g), encodeSrgb(c.b));
  }
  const Rgb grey = oklabToLinearRgb(lightness, 0, 0);
  return QColor(encodeSrgb(grey.r), encodeSrgb(grey.g), encodeSrgb(grey.b));
}

const std::array<QColor, kSteps>& rampTable() {
  static const std::array<QColor, kSteps> table = [] {
    std::array<QColor, kSteps> t;
    for (int i = 0; i < kSteps; ++i) t[i] = computeRampColor(double(i) / (kSteps - 1));
    return t;
  }();
  return table;
}

}  // namespace

QColor rampColor(double t) {
  if (!(t > 0)) t = 0;  // also catches NaN
  const int index = static_cast<int>(std::lround(std::min(t, 1.0) * (kSteps - 1)));
  return rampTable()[index];
}

}  // namespace attnlab
