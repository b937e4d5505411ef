#pragma once
// attnlab --tour NAME --check [--screenshots DIR]: runs every step of a tour in the window without
// waiting for anyone (questions unanswered), prints each step's outcome and its checks' texts as
// the panel shows them, optionally saves a picture of the window after every step
// (DIR/NAME-NN.png), and exits 0 only when every step ran and every check held.
#include <QString>

namespace attnlab {

class MainWindow;
struct Tour;

// Starts the run; the application exits with the check's code when it is over.
void startTourCheck(MainWindow& window, const Tour& tour, const QString& screenshotDir);

}  // namespace attnlab
