// A tour file (models/tour_file.h parseTour), with the app's view names.
#include "fuzz_support.h"
#include "tour_file.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> views = {"attention", "model", "spectra", "kv", "embedding", "heads", "circuits"};
  Tour tour;
  if (parseTour(fuzz::bytesOf(data, size), "fuzz", "fuzz.tour", tour, views).empty())
    for (const TourStep& step : tour.steps) step.calls();
  return 0;
}
