#pragma once
// Ctrl-C during training: the first SIGINT only asks the loop to stop after the current step
// (so it can save); a second one terminates as usual.
namespace attnlab::cli {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handler
  ~InterruptGuard();  // restores the previous one
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  bool requested() const;
};

}  // namespace attnlab::cli
