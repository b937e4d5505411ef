#pragma once
// Engine work off the UI thread runs this much nicer than the UI thread, so painting and input never
// wait for a core while training and the views' computations keep every core busy (OpenMP threads
// a worker starts inherit it). Qt's thread priorities do nothing for normal threads on Linux.
namespace attnlab {

constexpr int kWorkerNicenessAboveUi = 10;

// Lowers the calling thread's priority to the UI's niceness + kWorkerNicenessAboveUi (once: calling
// it again on the same thread changes nothing). No effect where per-thread niceness is unknown.
void runBelowTheUi();

}  // namespace attnlab
