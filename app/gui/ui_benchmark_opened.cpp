// `attnlab --benchmark-ui --model DIR`: the UI thread with an opened model and a long probe. The
// probe (the model's first probe repeated up to kProbeTokens, or its context) is traced on the
// session's worker while a 10 ms UI timer records how late each tick comes; then the views that
// draw every position are rendered into images, each redraw timed (wall clock and UI-thread CPU).
#include <time.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "attention_map_model.h"
#include "main_window.h"
#include "model_opener.h"
#include "ui_benchmark.h"
#include "view_kind.h"

namespace attnlab {
namespace {

constexpr int kTimerMs = 10;
constexpr int kProbeTokens = 1024;
constexpr int kOpenTimeoutMs = 600000;

double cpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double percentile(std::vector<double> v, double fraction) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(static_cast<size_t>(fraction * static_cast<double>(v.size())), v.size() - 1)];
}

QJsonObject spread(const std::vector<double>& v) {
  return {{QStringLiteral("p50"), percentile(v, 0.5)}, {QStringLiteral("p99"), percentile(v, 0.99)}, {QStringLiteral("max"), percentile(v, 1.0)}};
}

// Waits in the event loop until `done` holds (checked on every map change and every 50 ms).
bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
  QEventLoop loop;
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (done()) loop.quit();
  });
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  poll.start(50);
  if (!done()) loop.exec();
  return done();
}

}  // namespace

int runOpenedModelUiBenchmark(MainWindow& window, const QString& modelDir, const UiBenchmarkOptions& options) {
  AttentionMapModel& map = window.attentionMap();
  window.resize(1400, 900);
  window.showView(QStringLiteral("attention"));
  window.show();
  QString refusal;
  QObject::connect(&window.modelOpener(), &ModelOpener::refused, [&](const QString&, const QString& message) { refusal = message; });
  window.openModelFolder(modelDir);
  if (!waitUntil([&] { return !refusal.isEmpty() || (window.session().hasOpenedModel() && map.snapshot()); }, kOpenTimeoutMs) ||
      !refusal.isEmpty()) {
    std::fprintf(stderr, "attnlab: benchmark: %s could not be opened: %s\n", qPrintable(modelDir), qPrintable(refusal));
    return 1;
  }
  const std::vector<int> first = map.snapshot()->trace.tokens;
  const int length = std::min(kProbeTokens, map.snapshot()->maxProbeLength);
  std::vector<int> probe;
  while (static_cast<int>(probe.size()) < length) probe.push_back(first[probe.size() % first.size()]);

  // Phase 1: the long trace on the worker; the UI timer meanwhile.
  std::vector<double> lateness;
  QElapsedTimer sinceTick, tracing;
  QTimer timer;
  timer.setTimerType(Qt::PreciseTimer);
  QObject::connect(&timer, &QTimer::timeout, [&] {
    lateness.push_back(std::max(0.0, sinceTick.nsecsElapsed() * 1e-6 - kTimerMs));
    sinceTick.restart();
  });
  tracing.start();
  sinceTick.start();
  timer.start(kTimerMs);
  window.session().setProbe(probe);
  const bool traced = waitUntil([&] { return map.snapshot()->trace.tokens == probe; }, kOpenTimeoutMs);
  const double traceSeconds = tracing.nsecsElapsed() * 1e-9;
  // Switching to each view that draws the whole probe, the timer still running.
  std::vector<double> switchMs;
  for (const char* id : {"model", "heads", "attention"}) {
    QElapsedTimer t;
    t.start();
    window.showView(QString::fromLatin1(id));
    QCoreApplication::processEvents();
    switchMs.push_back(t.nsecsElapsed() * 1e-6);
  }
  timer.stop();
  if (!traced) {
    std::fprintf(stderr, "attnlab: benchmark: the %d-token trace did not arrive\n", length);
    return 1;
  }

  // Phase 2: redraws of the views that draw every position.
  struct Redraws {
    QString view;
    QSize size;
    std::vector<double> wall, cpu;
    double firstWall = 0, firstCpu = 0;  // the first draw after the trace (it makes any cached images)
  };
  std::vector<Redraws> redraws;
  for (const char* id : {"attention", "model", "heads"}) {
    window.showView(QString::fromLatin1(id));
    QCoreApplication::processEvents();
    window.settleView(viewKindIndex(QString::fromLatin1(id)));  // the model view's thumbnails come from a worker
    QWidget* widget = window.exportable(viewKindIndex(QString::fromLatin1(id)))->exportWidget();
    QImage image(widget->size(), QImage::Format_ARGB32_Premultiplied);
    Redraws r{QString::fromLatin1(id), widget->size(), {}, {}, 0, 0};
    for (int i = -1; i < options.redraws; ++i) {
      QElapsedTimer wall;
      const double cpu = cpuMs();
      wall.start();
      widget->render(&image);
      if (i < 0) {
        r.firstWall = wall.nsecsElapsed() * 1e-6;
        r.firstCpu = cpuMs() - cpu;
        continue;
      }
      r.wall.push_back(wall.nsecsElapsed() * 1e-6);
      r.cpu.push_back(cpuMs() - cpu);
    }
    redraws.push_back(std::move(r));
  }
  const ModelConfig& c = map.snapshot()->model->model->config();
  std::printf("UI benchmark: opened model %s (%d layers x %d heads, d_model %d), %d-token probe traced on the worker in %.1f s, window %dx%d\n",
              qPrintable(modelDir), c.n_layers, c.n_heads, c.d_model, length, traceSeconds, window.width(), window.height());
  std::printf("| measure | p50 / median | p99 | max | first draw |\n| --- | --- | --- | --- | --- |\n");
  std::printf("| UI timer lateness ms (%d ms timer, %zu ticks, while tracing and switching views) | %.1f | %.1f | %.1f | |\n", kTimerMs,
              lateness.size(), percentile(lateness, 0.5), percentile(lateness, 0.99), percentile(lateness, 1.0));
  std::printf("| switching to the model, head-lines and heatmap views ms | %.1f | %.1f | %.1f | |\n", percentile(switchMs, 0.5),
              percentile(switchMs, 0.99), percentile(switchMs, 1.0));
  for (const Redraws& r : redraws)
    std::printf("| %s view redraw %dx%d px, wall / UI-thread CPU ms (%d redraws) | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f |\n",
                qPrintable(r.view), r.size.width(), r.size.height(), options.redraws, percentile(r.wall, 0.5), percentile(r.cpu, 0.5),
                percentile(r.wall, 0.99), percentile(r.cpu, 0.99), percentile(r.wall, 1.0), percentile(r.cpu, 1.0), r.firstWall, r.firstCpu);
  std::fflush(stdout);

  if (!options.outFile.isEmpty()) {
    QJsonArray views;
    for (const Redraws& r : redraws)
      views.append(QJsonObject{{QStringLiteral("view"), r.view}, {QStringLiteral("width"), r.size.width()},
                               {QStringLiteral("height"), r.size.height()}, {QStringLiteral("redraw_ms"), spread(r.wall)},
                               {QStringLiteral("redraw_cpu_ms"), spread(r.cpu)}, {QStringLiteral("first_draw_ms"), r.firstWall},
                               {QStringLiteral("first_draw_cpu_ms"), r.firstCpu}});
    const QJsonObject figures = {{QStringLiteral("model"), modelDir},
                                 {QStringLiteral("layers"), c.n_layers},
                                 {QStringLiteral("heads"), c.n_heads},
                                 {QStringLiteral("probe_tokens"), length},
                                 {QStringLiteral("trace_seconds"), traceSeconds},
                                 {QStringLiteral("timer_lateness_ms"), spread(lateness)},
                                 {QStringLiteral("view_switch_ms"), spread(switchMs)},
                                 {QStringLiteral("redraws"), views}};
    QFile file(options.outFile);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(QJsonDocument(figures).toJson()) < 0) {
      std::fprintf(stderr, "attnlab: benchmark: cannot write %s\n", qPrintable(options.outFile));
      return 1;
    }
  }
  window.session().stop();
  return 0;
}

}  // namespace attnlab
