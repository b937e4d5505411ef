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

}  // namespace attnlab
