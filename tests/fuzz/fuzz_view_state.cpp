// A checkpoint's view_state.json (io/view_state.h): read, and written back when valid.
#include "fuzz_support.h"
#include "io/view_state.h"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ViewState state;
  if (viewStateFromJson(fuzz::bytesOf(data, size), state).empty()) viewStateToJson(state);
  return 0;
}
