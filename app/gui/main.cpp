// build/bin/attnlab: the Attention Lab desktop app. See --help.
#include <QApplication>
#include <QSurfaceFormat>
#include <cstdio>
#include <cstring>
#include <memory>

#include "attention_map_model.h"
#include "comparison_window.h"
#include "core/heap_reuse.h"
#include "core/openmp_wait.h"
#include "head_selection.h"
#include "launch_options.h"
#include "selection_link.h"
#include "main_window.h"
#include "tour_check.h"
#include "tour_library.h"
#include "presenter_mode.h"
#include "tour_panel.h"
#include "welcome_page.h"
#include "ui_benchmark.h"

// attnlab --compare A,B: the comparison window alone.
static int runComparison(const attnlab::LaunchOptions& options) {
  attnlab::ComparisonWindow window(options.compare);
  if (options.view >= 0) window.setViewKind(options.view);
  if (options.layer > 0 || options.head > 0) window.selection()->select(options.layer, options.head);
  window.show();
  if (options.quitAfterSteps > 0) {
    QObject::connect(&window, &attnlab::ComparisonWindow::captureFinished, qApp, [](bool saved, const QString& message) {
      std::fprintf(saved ? stdout : stderr, "attnlab: %s\n", qPrintable(message));
      QCoreApplication::exit(saved ? 0 : 1);
    });
    window.captureAfterSteps(options.quitAfterSteps, options.screenshotFile);
    window.trainAll();
  }
  return QApplication::exec();
}

int main(int argc, char** argv) {
  attnlab::restartWithPassiveOpenMpWait(argv);
  attnlab::keepFreedBlocksForReuse();
  // OpenGL 3.2 core with a depth buffer, set before QApplication exists: what the VTK views
  // (an offscreen context + vtkGenericOpenGLRenderWindow, see views/qk_embedding_view.h) need.
  QSurfaceFormat format;
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  QSurfaceFormat::setDefaultFormat(format);

  // Listing the tours needs no window, so it works without a display.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--tours") == 0 && qEnvironmentVariableIsEmpty("DISPLAY")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Attention Lab"));
  QApplication::setOrganizationName(QStringLiteral("attnlab"));  // QSettings: ~/.config/attnlab/Attention Lab.conf
  QApplication::setApplicationVersion(QStringLiteral(ATTNLAB_VERSION));

  attnlab::LaunchOptions options;
  const QString error = attnlab::parseLaunchOptions(QApplication::arguments(), options);
  if (!error.isEmpty()) {
    std::fprintf(stderr, "attnlab: %s\n", qPrintable(error));
    return 2;
  }
  if (options.showHelp) {
    std::printf("%s\n", qPrintable(options.helpText.trimmed()));
    return 0;
  }

  if (options.listTours) {
    for (const attnlab::Tour& tour : attnlab::shippedTours().tours) std::printf("%s\t%s\n", tour.name.c_str(), tour.title.c_str());
    for (const QString& error : attnlab::shippedTours().errors) std::fprintf(stderr, "attnlab: refused %s\n", qPrintable(error));
    return 0;
  }
  if (!options.compare.empty()) return runComparison(options);

  attnlab::MainWindow window(options.config, options.presetName);
  if (options.benchmarkUi && !options.modelDir.isEmpty())
    return attnlab::runOpenedModelUiBenchmark(window, options.modelDir, {options.benchmarkSteps, 20, options.benchmarkOut});
  if (options.benchmarkUi) return attnlab::runUiBenchmark(window, {options.benchmarkSteps, 50, options.benchmarkOut});
  if (options.screenshotFile.isEmpty() && options.exportFile.isEmpty() && !options.tourCheck) {  // pictures show the plain default layout
    window.restoreLayout();
    if (!options.experimentChosen && options.modelDir.isEmpty()) window.restoreLastExperiment();
  }
  if (options.view >= 0) window.showView(options.view);
  window.show();
  if (options.layer > 0 || options.head > 0) {  // applied once the first map arrives
    auto& map = window.attentionMap();
    auto& selection = window.selection();
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = QObject::connect(&map, &attnlab::AttentionMapModel::mapChanged, &map, [&map, &selection, once, options] {
      if (!map.hasMap()) return;
      QObject::disconnect(*once);
      selection.select(options.layer, options.head);
    });
  }
  if (options.presenter) window.findChild<attnlab::PresenterMode*>()->setOn(true);
  // The first start offers tours and presets; pictures, checks and a chosen tour go without it.
  if (options.screenshotFile.isEmpty() && options.exportFile.isEmpty() && options.tourName.isEmpty() && attnlab::WelcomePage::wanted())
    attnlab::WelcomePage::showFor(&window);
  // A tour on a real model (--model) finds it opening when its first step starts.
  if (!options.modelDir.isEmpty() && !options.tourName.isEmpty()) window.openModelFolder(options.modelDir);
  if (!options.tourName.isEmpty()) {
    const attnlab::Tour* shipped = attnlab::shippedTours().find(options.tourName);
    const attnlab::Tour& chosen = options.tourFile.steps.empty() && shipped ? *shipped : options.tourFile;
    const attnlab::Tour tour = options.tourShort ? attnlab::shortVariant(chosen) : chosen;
    if (options.tourShort && options.tourCheck)
      std::printf("%s: %s\n", tour.name.c_str(), tour.hasShortVariant() ? ("the short variant: " + tour.shortNote).c_str() : "no short variant: the whole tour runs");
    if (options.tourCheck) attnlab::startTourCheck(window, tour, options.tourScreenshots);
    else window.tourPanel()->startTour(tour);
  }
  if (options.quitAfterSteps > 0 || options.captureOpened) {
    QObject::connect(&window, &attnlab::MainWindow::captureFinished, &app, [](bool saved, const QString& message) {
      std::fprintf(saved ? stdout : stderr, "attnlab: %s\n", qPrintable(message));
      QCoreApplication::exit(saved ? 0 : 1);
    });
  }
  if (options.captureOpened) {
    window.captureWhenOpened(options.screenshotFile, options.exportFile);
  } else if (options.quitAfterSteps > 0) {
    window.captureAfterSteps(options.quitAfterSteps, options.screenshotFile, options.exportFile);
    window.startTraining();
  }
  if (!options.modelDir.isEmpty() && options.tourName.isEmpty()) window.openModelFolder(options.modelDir);
  return app.exec();
}
