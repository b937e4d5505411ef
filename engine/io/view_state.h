#pragma once
// What the window showed around a saved experiment, kept in its folder as view_state.json: the
// view on display, the probe, the selected head, the colour scale and the KV-cache view's eviction
// policy and budget (the same members as a comparison file's, io/comparison_file.h). The app
// writes it after each save; a folder without one opens with the defaults.
#include <string>
#include <vector>

namespace attnlab {

struct ViewState {
  std::string view;        // a view kind id; "" keeps the window's
  std::vector<int> probe;  // token ids; empty: the run's own probe
  int layer = 0, head = 0;
  bool logColours = false;
  std::string policy, budget;  // "" keeps the view's
  bool operator==(const ViewState&) const = default;
};

std::string viewStateToJson(const ViewState& state);
// Returns "" and fills `out`, or a one-line reason.
std::string viewStateFromJson(const std::string& text, ViewState& out);
// Returns "" or a one-line reason naming the file.
std::string writeViewState(const std::string& folder, const ViewState& state);
// Fills `out` from the folder's view_state.json; "" also when there is none (then `found` is false).
std::string readViewState(const std::string& folder, ViewState& out, bool& found);

}  // namespace attnlab
