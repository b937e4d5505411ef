#pragma once
// `attnlab --benchmark-ui`: how the UI thread fares while the real window trains. A 10 ms timer on
// the UI thread records how late each tick comes while the session trains the given steps (with the
// attention heatmap on screen, redrawn on each published trace); then, training paused, the
// heatmap of the probe is drawn into an image repeatedly and each redraw is timed (wall clock and
// the UI thread's CPU time, which a loaded machine does not inflate). Prints a table; optionally
// writes the figures as JSON.
#include <QString>

namespace attnlab {

class MainWindow;

struct UiBenchmarkOptions {
  int steps = 20;      // training steps while the timer runs
  int redraws = 50;    // timed heatmap redraws afterwards
  QString outFile;     // JSON figures, when not empty
};

// Shows `window`, runs the benchmark in the event loop and returns the exit code (0, or 1 with a
// one-line message on stderr when training fails or the output cannot be written).
int runUiBenchmark(MainWindow& window, const UiBenchmarkOptions& options);
// With --model DIR (ui_benchmark_opened.cpp): the folder's model on a 1,024-token probe (or its
// context) traced on the worker, the UI timer meanwhile, then redraws of the views that draw
// every position. options.steps is not used.
int runOpenedModelUiBenchmark(MainWindow& window, const QString& modelDir, const UiBenchmarkOptions& options);

}  // namespace attnlab
