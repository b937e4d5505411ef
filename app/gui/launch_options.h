#pragma once
// The desktop app's command line: which experiment to open, and the screenshot hook used by the
// smoke test and for README pictures.
#include <QString>
#include <QStringList>
#include <vector>

#include "experiment/experiment_config.h"
#include "tour_file.h"

namespace attnlab {

struct LaunchOptions {
  ExperimentConfig config;  // the preset with --set and --steps applied
  QString presetName = QStringLiteral("induction");
  bool experimentChosen = false;  // --preset, --set or --steps given (else the app reopens the last experiment)
  QString screenshotFile;  // with quitAfterSteps: train, save a picture of the window, exit
  QString exportFile;      // with quitAfterSteps: export the shown view (.png, .svg or .csv)
  int quitAfterSteps = 0;
  int view = -1;  // index into viewKinds(), the view shown first; -1: the window's own first
  int layer = 0, head = 0;  // 0-based head shown first (--layer/--head are 1-based, as in the pickers)
  // --compare A,B[,C,D]: the presets (with --set and --steps applied) to open side by side in a
  // comparison window instead of the main window.
  std::vector<ExperimentConfig> compare;
  QString modelDir;            // --model DIR: a Hugging Face model folder to open
  bool captureOpened = false;  // --model with --quit-after-steps: capture once its probe shows, then exit
  bool benchmarkUi = false;   // --benchmark-ui: measure the UI thread while training (ui_benchmark.h), then exit
  int benchmarkSteps = 20;    // --steps, when given, else 20
  QString benchmarkOut;       // --out FILE: the benchmark's figures as JSON
  bool listTours = false;     // --tours: print each tour's name and title, then exit
  QString tourName;           // --tour NAME: start that tour (NAME.tour or a path: a file on disk)
  Tour tourFile;              // the tour read from that file, when it is one
  bool tourCheck = false;     // --check: run the tour headless and exit with its outcome (tour_check.h)
  QString tourScreenshots;    // --screenshots DIR: with --check, a picture of every step
  bool tourShort = false;     // --short: the tour's short variant (tour_file.h)
  bool presenter = false;     // --presenter: start in presenter mode (presenter_mode.h)
  bool showHelp = false;
  QString helpText;
};

// `arguments` as QCoreApplication::arguments() gives them (program first, Qt's own options removed).
// Returns "" and fills `out`, or a one-line reason.
QString parseLaunchOptions(const QStringList& arguments, LaunchOptions& out);

}  // namespace attnlab
