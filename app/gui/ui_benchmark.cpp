#include "ui_benchmark.h"

#include <time.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "main_window.h"

namespace attnlab {
namespace {

constexpr int kTimerMs = 10;

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

// The value below which `fraction` of the sorted values lie (nearest rank); 0 for none.
double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(fraction * static_cast<double>(values.size()));
  return values[std::min(rank, values.size() - 1)];
}

QJsonObject spreadJson(const std::vector<double>& values) {
  return {{QStringLiteral("p50"), percentile(values, 0.5)},
          {QStringLiteral("p99"), percentile(values, 0.99)},
          {QStringLiteral("max"), percentile(values, 1.0)}};
}

// Lets the window's first show and paint pass (it builds the views once), so that the timer
// measures the UI while training, not the start.
void settle() {
  QElapsedTimer waited;
  waited.start();
  while (waited.elapsed() < 300) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
}

}  // namespace

int runUiBenchmark(MainWindow& window, const UiBenchmarkOptions& options) {
  TrainingSession& session = window.session();
  AttentionMapModel& map = window.attentionMap();
  window.resize(1400, 900);
  window.showView(QStringLiteral("attention"));  // the heatmap redraws on every published trace
  window.show();
  settle();

  // Phase 1: timer lateness while the session trains options.steps steps.
  QEventLoop loop;
  QString failure;
  std::vector<double> lateness;  // ms after the tick was due
  QElapsedTimer sinceTick;
  QTimer timer;
  timer.setTimerType(Qt::PreciseTimer);
  QObject::connect(&timer, &QTimer::timeout, [&] {
    lateness.push_back(std::max(0.0, sinceTick.nsecsElapsed() * 1e-6 - kTimerMs));
    sinceTick.restart();
  });
  QObject::connect(&session, &TrainingSession::pausedAt, &loop, [&] { loop.quit(); });
  QObject::connect(&session, &TrainingSession::stateChanged, &loop, [&](TrainingSession::State state) {
    if (state == TrainingSession::State::Finished) loop.quit();
  });
  QObject::connect(&session, &TrainingSession::failed, &loop, [&](const QString& message) {
    failure = message;
    loop.quit();
  });
  QElapsedTimer training;
  training.start();
  sinceTick.start();
  timer.start(kTimerMs);
  session.setPauseAtStep(options.steps);
  window.startTraining();
  loop.exec();
  timer.stop();
  const double trainingSeconds = training.nsecsElapsed() * 1e-9;
  if (!failure.isEmpty()) {
    std::fprintf(stderr, "attnlab: benchmark: training failed: %s\n", qPrintable(failure));
    return 1;
  }

  // Phase 2: the heatmap of the paused run's probe, drawn into an image `redraws` times.
  if (!map.hasMap()) {  // the last step's trace may still be on its way
    QObject::connect(&map, &AttentionMapModel::mapChanged, &loop, [&] {
      if (map.hasMap()) loop.quit();
    });
    QTimer::singleShot(120000, &loop, [&] { loop.quit(); });
    loop.exec();
    if (!map.hasMap()) {
      std::fprintf(stderr, "attnlab: benchmark: no attention map arrived within 2 minutes\n");
      return 1;
    }
  }
  AttentionHeatmapView& heatmap = *window.view<AttentionHeatmapView>();
  QImage image(heatmap.size(), QImage::Format_ARGB32_Premultiplied);
  std::vector<double> redrawMs, redrawCpuMs;
  for (int i = -1; i < options.redraws; ++i) {  // the first draw warms the caches, untimed
    QElapsedTimer wall;
    const double cpuStart = threadCpuMs();
    wall.start();
    heatmap.render(&image);
    if (i < 0) continue;
    redrawMs.push_back(wall.nsecsElapsed() * 1e-6);
    redrawCpuMs.push_back(threadCpuMs() - cpuStart);
  }
  session.stop();

  const int tokens = window.selection().shown().size();
  const ModelConfig& model = window.config().model;
  std::printf("UI benchmark: %d layers x %d heads, %d-token probe, %d training steps in %.1f s, window %dx%d, heatmap %dx%d px\n",
              model.n_layers, model.n_heads, tokens, options.steps, trainingSeconds, window.width(), window.height(), heatmap.width(),
              heatmap.height());
  std::printf("| measure | p50 / median | p99 | max | target |\n| --- | --- | --- | --- | --- |\n");
  std::printf("| UI timer lateness ms (%d ms timer, %zu ticks, while training) | %.1f | %.1f | %.1f | p99 < 16 ms: %s |\n", kTimerMs,
              lateness.size(), percentile(lateness, 0.5), percentile(lateness, 0.99), percentile(lateness, 1.0),
              percentile(lateness, 0.99) < 16 ? "met" : "not met");
  std::printf("| %dx%d heatmap redraw ms (%d redraws) | %.2f | %.2f | %.2f | < 8 ms: %s |\n", tokens, tokens, options.redraws,
              percentile(redrawMs, 0.5), percentile(redrawMs, 0.99), percentile(redrawMs, 1.0),
              percentile(redrawMs, 0.5) < 8 ? "met" : "not met");
  std::printf("| heatmap redraw, UI-thread CPU ms | %.2f | %.2f | %.2f | (load-independent view) |\n", percentile(redrawCpuMs, 0.5),
              percentile(redrawCpuMs, 0.99), percentile(redrawCpuMs, 1.0));
  std::fflush(stdout);

  if (!options.outFile.isEmpty()) {
    const QJsonObject figures = {{QStringLiteral("probe_tokens"), tokens},
                                 {QStringLiteral("training_steps"), options.steps},
                                 {QStringLiteral("training_seconds"), trainingSeconds},
                                 {QStringLiteral("timer_ms"), kTimerMs},
                                 {QStringLiteral("timer_ticks"), static_cast<int>(lateness.size())},
                                 {QStringLiteral("timer_lateness_ms"), spreadJson(lateness)},
                                 {QStringLiteral("heatmap_width"), heatmap.width()},
                                 {QStringLiteral("heatmap_height"), heatmap.height()},
                                 {QStringLiteral("heatmap_redraws"), options.redraws},
                                 {QStringLiteral("heatmap_redraw_ms"), spreadJson(redrawMs)},
                                 {QStringLiteral("heatmap_redraw_cpu_ms"), spreadJson(redrawCpuMs)}};
    QFile file(options.outFile);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(QJsonDocument(figures).toJson()) < 0) {
      std::fprintf(stderr, "attnlab: benchmark: cannot write %s: %s\n", qPrintable(options.outFile), qPrintable(file.errorString()));
      return 1;
    }
  }
  return 0;
}

}  // namespace attnlab
