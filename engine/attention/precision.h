#pragma once
// Emulated precision of the score path (ModelConfig::score_precision). Values stay float32 in
// memory but are rounded, at the points a low-precision kernel would store them, to what bf16 or
// fp16 can represent: scores (after scale and bias), the bias itself, logits and exponentials.
// Maxima, sums and products accumulate in float32, as tensor-core accumulators do.
// The point is honesty about failures: an exponential under half fp16's smallest subnormal (2^-25)
// becomes exactly 0, so far ALiBi weights vanish in the trace just as they would on such hardware.
// Backward is straight-through: rounding counts as the identity, gradients are those of fp32.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

enum class ScorePrecision { fp32, bf16, fp16 };

// Round-to-nearest-even to 8 significant bits (bf16: float32's exponent range, subnormals kept).
inline float roundToBf16(float x) {
  if (std::isnan(x)) return x;
  // bf16 is the top half of a float32: add just under half of the dropped part, plus one when the
  // kept part is odd (ties to even), then drop it. A carry into the exponent is the correct rounding,
  // and rounding past the largest finite value yields inf as the format would.
  uint32_t u = std::bit_cast<uint32_t>(x);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xFFFF0000u);
}

// Round-to-nearest-even to 11 significant bits (fp16): from 65520 up (half a step above 65504) -> inf,
// subnormals in steps of 2^-24 below 2^-14, anything under 2^-25 -> 0 (a tie at 2^-25 goes to 0, the even neighbour).
inline float roundToFp16(float x) {
  if (!std::isfinite(x)) return x;
  const float a = std::fabs(x);
  if (a >= 65520.0f) return std::copysign(INFINITY, x);
  // fp16 keeps 10 fraction bits, so its spacing at a's binade is 2^(e - 10); below 2^-14 the spacing
  // stays 2^-24 (subnormals). Adding and subtracting c = spacing * 2^23 makes the float adder round a
  // to that spacing, to nearest even. (IEEE semantics: the engine is never built with -ffast-math,
  // which could fold (a + c) - c into a; test_variant_invariants checks the rounding.)
  const int biasedExponent = static_cast<int>(std::bit_cast<uint32_t>(a) >> 23);
  const int spacingExponent = std::max(biasedExponent, 127 - 14) - 10;  // biased exponent of the spacing
  const float c = std::bit_cast<float>(static_cast<uint32_t>(spacingExponent + 23) << 23);
  return std::copysign((a + c) - c, x);
}

// What the variants call: x unchanged in fp32.
inline float roundTo(ScorePrecision p, float x) {
  switch (p) {
    case ScorePrecision::bf16: return roundToBf16(x);
    case ScorePrecision::fp16: return roundToFp16(x);
    case ScorePrecision::fp32: break;
  }
  return x;
}

// Parses "fp32", "bf16", "fp16"; returns false for anything else.
bool parseScorePrecision(const std::string& name, ScorePrecision& out);
// "fp32, bf16, fp16", for messages.
const char* scorePrecisionNames();
// Each format with its one-line rule, in scorePrecisionNames() order, for pickers and listings.
struct ScorePrecisionInfo {
  std::string name;
  std::string summary;
};
const std::vector<ScorePrecisionInfo>& scorePrecisionCatalogue();

}  // namespace attnlab
