#pragma once
// One status line on stderr, redrawn in place. Only used when stderr is a terminal.
#include <chrono>
#include <string>

namespace attnlab::cli {

class ProgressBar {
 public:
  // Redraws `status` behind a bar filled to done/total, at most ten times a second unless `force`.
  void draw(int done, int total, const std::string& status, bool force = false);
  // Erases the line so that ordinary output can follow; the next draw() brings it back.
  void clear();

 private:
  bool shown_ = false;
  std::chrono::steady_clock::time_point lastDraw_;
};

}  // namespace attnlab::cli
