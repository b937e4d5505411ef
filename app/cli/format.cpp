#include "format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attnlab::cli {

Json numberOrNull(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json shortFloat(float value) {
  if (!std::isfinite(value)) return nullptr;
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text) - 1, value);
  *result.ptr = '\0';
  return std::strtod(text, nullptr);
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string percent(double fraction) { return std::isfinite(fraction) ? fixed(100.0 * fraction, 1) + "%" : "n/a"; }

std::string compactCount(double value) {
  if (!std::isfinite(value)) return "n/a";
  if (value >= 1e6) return fixed(value / 1e6, 1) + "M";
  if (value >= 1e3) return fixed(value / 1e3, 1) + "k";
  return fixed(value, 0);
}

std::string duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char text[32];
  if (s < 60)
    std::snprintf(text, sizeof(text), "%lds", s);
  else if (s < 3600)
    std::snprintf(text, sizeof(text), "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof(text), "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return text;
}

}  // namespace attnlab::cli
