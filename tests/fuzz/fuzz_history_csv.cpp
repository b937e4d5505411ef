// A saved experiment's history.csv (io/checkpoint.h readHistoryCsv).
#include "fuzz_support.h"
#include "io/checkpoint.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file = fuzz::scratch() / "history.csv";
  fuzz::writeFile(file, fuzz::bytesOf(data, size));
  std::vector<TrainPoint> history;
  readHistoryCsv(file.string(), history);
  return 0;
}
