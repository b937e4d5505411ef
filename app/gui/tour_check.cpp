#include "tour_check.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QTimer>
#include <cstdio>
#include <memory>

#include "kv_cache_model.h"
#include "kv_cache_view.h"
#include "main_window.h"
#include "view_kind.h"
#include "tour_panel.h"

namespace attnlab {

namespace {
constexpr int kSettleMs = 200;  // layouts and charts settle before a picture, as for --screenshot
}

void startTourCheck(MainWindow& window, const Tour& tour, const QString& screenshotDir) {
  const QString tourName = QString::fromStdString(tour.name);
  TourPanel* panel = window.tourPanel();
  TourRunner* runner = panel->runner();
  runner->setAutomatic(true);
  auto clock = std::make_shared<QElapsedTimer>();
  auto failures = std::make_shared<int>(0);
  clock->start();
  if (!screenshotDir.isEmpty() && !QDir().mkpath(screenshotDir)) {  // a folder that is not there yet is made
    std::fprintf(stderr, "attnlab: could not create the screenshot folder %s\n", qPrintable(screenshotDir));
    QTimer::singleShot(0, [] { QCoreApplication::exit(1); });
    return;
  }
  QObject::connect(runner, &TourRunner::stepDone, panel, [&window, runner, clock, failures, tourName, screenshotDir](int step) {
    const Tour& tour = runner->tour();
    const TourRunner::StepResult& r = runner->result(step);
    const int count = int(tour.steps.size());
    std::printf("step %d/%d \"%s\" (%.1f s): %s\n", step + 1, count, tour.steps[step].title.c_str(), clock->elapsed() / 1000.0,
                r.problem.isEmpty() ? "ran" : qPrintable(QStringLiteral("could not run: ") + r.problem));
    if (!r.problem.isEmpty()) ++*failures;
    for (size_t i = 0; i < r.checks.size(); ++i) {
      std::printf("  check %zu %s: %s\n", i + 1, r.checks[i].held ? "held" : "FAILED", qPrintable(r.checks[i].text));
      if (!r.checks[i].held) ++*failures;
    }
    std::fflush(stdout);
    // After the picture (if any), the next step, or the end.
    auto proceed = [runner, step, count, failures, clock] {
      if (step + 1 < count && runner->result(step).problem.isEmpty()) return runner->next();
      const bool ok = *failures == 0 && step + 1 == count;
      std::printf("%s: %d steps in %.1f s, %s\n", runner->tour().name.c_str(), step + 1, clock->elapsed() / 1000.0,
                  ok ? "every step ran and every check held" : "NOT every step ran with its checks holding");
      QCoreApplication::exit(ok ? 0 : 1);
    };
    if (screenshotDir.isEmpty()) return QTimer::singleShot(0, runner, proceed);
    QTimer::singleShot(kSettleMs, runner, [&window, proceed, screenshotDir, tourName, step] {
      window.settleView(window.currentView());
      if (window.currentView() == viewKindIndex("kv")) window.view<KvCacheView>()->model()->waitForIdle();
      QApplication::processEvents();
      const QString file = QDir(screenshotDir).filePath(QStringLiteral("%1-%2.png").arg(tourName).arg(step + 1, 2, 10, QLatin1Char('0')));
      if (!window.grab().save(file)) {
        std::fprintf(stderr, "attnlab: could not write %s\n", qPrintable(file));
        return QCoreApplication::exit(1);
      }
      proceed();
    });
  });
  panel->startTour(tour);
}

}  // namespace attnlab
