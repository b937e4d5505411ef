// A Hugging Face config.json (hf/hf_model.h readHfConfig): every registered architecture's reader,
// and the parameter and memory estimates made from what it read.
#include <algorithm>

#include "fuzz_support.h"
#include "hf/hf_model.h"
#include "train/memory_estimate.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto dir = fuzz::scratch();
  fuzz::writeFile(dir / "config.json", fuzz::bytesOf(data, size));
  hf::HfModelInfo info;
  if (hf::readHfConfig(dir.string(), info).empty()) {
    InferenceEstimate reading;
    estimateInference(info.config, std::min(info.config.context, kOpeningTokens), false, reading);
    MemoryEstimate training;
    estimateTraining(info.config, 8, info.config.context, training);
  }
  return 0;
}
