#include "progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace attnlab::cli {

namespace {
constexpr int kBarWidth = 24;
constexpr auto kMinInterval = std::chrono::milliseconds(100);
constexpr const char* kClearLine = "\r\033[K";

// A line wider than the terminal wraps, and "\r" then only returns to its last row.
size_t terminalColumns() {
  winsize size{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
}
}  // namespace

void ProgressBar::draw(int done, int total, const std::string& status, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && !force && now - lastDraw_ < kMinInterval) return;
  const int filled = total > 0 ? std::clamp(done * kBarWidth / total, 0, kBarWidth) : 0;
  std::ostringstream text;
  text << "[" << std::string(filled, '#') << std::string(kBarWidth - filled, '.') << "] " << done << "/" << total
       << "  " << status;
  std::string line = text.str();
  line.resize(std::min(line.size(), terminalColumns() - 1));
  std::cerr << kClearLine << line << std::flush;
  shown_ = true;
  lastDraw_ = now;
}

void ProgressBar::clear() {
  if (!shown_) return;
  std::cerr << kClearLine << std::flush;
  shown_ = false;
}

}  // namespace attnlab::cli
