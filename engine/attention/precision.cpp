#include "attention/precision.h"

namespace attnlab {

bool parseScorePrecision(const std::string& name, ScorePrecision& out) {
  if (name == "fp32") out = ScorePrecision::fp32;
  else if (name == "bf16") out = ScorePrecision::bf16;
  else if (name == "fp16") out = ScorePrecision::fp16;
  else return false;
  return true;
}

const char* scorePrecisionNames() { return "fp32, bf16, fp16"; }

const std::vector<ScorePrecisionInfo>& scorePrecisionCatalogue() {
  static const std::vector<ScorePrecisionInfo> formats = {
      {"fp32", "scores, biases and exponentials in float32"},
      {"bf16", "scores, biases and exponentials rounded to bfloat16 (8 significant bits, float32's range)"},
      {"fp16", "scores, biases and exponentials rounded to float16 (11 significant bits; exponentials below 2^-25 become exactly 0)"},
  };
  return formats;
}

}  // namespace attnlab
