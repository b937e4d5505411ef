#include "interrupt.h"

#include <csignal>

namespace attnlab::cli {

namespace {
volatile std::sig_atomic_t interruptRequested = 0;
struct sigaction previousAction;

void onInterrupt(int) { interruptRequested = 1; }
}  // namespace

InterruptGuard::InterruptGuard() {
  interruptRequested = 0;
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the handler runs once; the next Ctrl-C gets the default
  sigaction(SIGINT, &action, &previousAction);
}

InterruptGuard::~InterruptGuard() { sigaction(SIGINT, &previousAction, nullptr); }

bool InterruptGuard::requested() const { return interruptRequested != 0; }

}  // namespace attnlab::cli
