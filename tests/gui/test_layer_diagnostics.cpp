// The training view's per-layer diagnostics against the step (issue 21): the values it plots at
// a validation step are those of MapDiagnosticsProbe on the model at that step, they are kept in
// history.csv, and a saved run reopened shows the same values.
#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QTemporaryDir>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QtTest>

#include "analysis/layer_diagnostics_probe.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "io/checkpoint.h"
#include "layer_diagnostics_chart.h"
#include "loss_history_model.h"
#include "metric_chart_view.h"
#include "tiny_experiment.h"
#include "training_session.h"
#include "training_view.h"

using namespace attnlab;

namespace {

constexpr int kSteps = 12, kEvery = 6;

ExperimentConfig tiny() {
  ExperimentConfig config = testing::tinyConfig(kSteps);
  config.train.eval_every = kEvery;
  config.train.threads = 1;
  return config;
}

// The plotted value of `layer` at `step` on the diagnostic's chart; NaN when there is no point.
double plotted(const TrainingView& view, LayerDiagnosticsChart::Diagnostic d, int layer, int step) {
  const QList<QAbstractSeries*> series = view.layerDiagnostics()->chart(d)->chart()->series();
  if (layer >= series.size()) return kNotMeasured;
  for (const QPointF& p : static_cast<QLineSeries*>(series[layer])->points())
    if (p.x() == step) return p.y();
  return kNotMeasured;
}

// The engine's numbers: the diagnostics probe measured on the model after each validation step.
std::vector<std::vector<MapDiagnostics>> expectedPerStep() {
  Trainer trainer(tiny());
  MapDiagnosticsProbe probe(trainer.task(), trainer.model().config().vocab, trainer.sequenceLength(), kLayerDiagnosticsBatch,
                            kLayerDiagnosticsSeed);
  std::vector<std::vector<MapDiagnostics>> out;
  while (!trainer.finished()) {
    trainer.trainStep();
    if (trainer.stepsDone() % kEvery == 0) out.push_back(MapDiagnosticsProbe::layerMeans(probe.measure(trainer.model())));
  }
  return out;
}

void checkPlotted(const TrainingView& view, const std::vector<std::vector<MapDiagnostics>>& expected) {
  QTest::qWait(400);  // charts draw newly arrived rows together, at most every 200 ms
  for (size_t k = 0; k < expected.size(); ++k) {
    const int step = kEvery * int(k + 1);
    for (int l = 0; l < 2; ++l) {
      const MapDiagnostics& e = expected[k][l];
      QCOMPARE(plotted(view, LayerDiagnosticsChart::Entropy, l, step), e.entropy);
      QCOMPARE(plotted(view, LayerDiagnosticsChart::PreviousToken, l, step), e.previous_token);
      QCOMPARE(plotted(view, LayerDiagnosticsChart::Induction, l, step), e.induction);
      QCOMPARE(plotted(view, LayerDiagnosticsChart::Sink, l, step), e.sink);
    }
  }
  QVERIFY(std::isnan(plotted(view, LayerDiagnosticsChart::Induction, 0, 1)));  // not a validation step
}

}  // namespace

class LayerDiagnosticsTest : public QObject {
  Q_OBJECT
 private slots:
  void plottedValuesAreTheEnginesAndSurviveReopening() {
    const auto expected = expectedPerStep();
    QCOMPARE(expected.size(), size_t(kSteps / kEvery));
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("run"));
    {
      TrainingSession session;
      LossHistoryModel history;
      AttentionMapModel attention;
      HeadSelection selection(&attention);
      connect(&session, &TrainingSession::lossPointsAdded, &history, &LossHistoryModel::append);
      TrainingView view(ViewContext{.attention = &attention, .selection = &selection, .history = &history});
      session.start(tiny());
      QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Finished, 60000);
      QTRY_COMPARE_WITH_TIMEOUT(history.rowCount(), kSteps, 10000);
      checkPlotted(view, expected);
      // one line per layer on every diagnostic, and the picker switches between them
      for (int d = 0; d < LayerDiagnosticsChart::DiagnosticCount; ++d)
        QCOMPARE(view.layerDiagnostics()->chart(LayerDiagnosticsChart::Diagnostic(d))->seriesCount(), 2);
      LayerDiagnosticsChart* diagnostics = view.layerDiagnostics();
      QCOMPARE(diagnostics->diagnostic(), LayerDiagnosticsChart::Induction);  // the default
      diagnostics->picker()->setCurrentIndex(LayerDiagnosticsChart::Sink);
      QCOMPARE(diagnostics->diagnostic(), LayerDiagnosticsChart::Sink);
      QVERIFY(diagnostics->chart(LayerDiagnosticsChart::Sink)->isVisibleTo(diagnostics));
      QVERIFY(!diagnostics->chart(LayerDiagnosticsChart::Induction)->isVisibleTo(diagnostics));
      QString csv;
      QTextStream out(&csv);
      view.writeCsv(out);
      QVERIFY(csv.section(QLatin1Char('\n'), 0, 0).endsWith(QStringLiteral("sink_layer1,sink_layer2")));
      QString error = QStringLiteral("not saved");
      connect(&session, &TrainingSession::saved, [&](const QString&, int, const QString& why) { error = why; });
      session.save(folder);
      QTRY_COMPARE_WITH_TIMEOUT(error, QString(), 20000);
    }
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder.toStdString(), loaded)), QString());
    QCOMPARE(loaded.trainer->history()[kEvery - 1].layer_diagnostics.induction.size(), size_t(2));
    QVERIFY(loaded.trainer->history()[0].layer_diagnostics.empty());
    TrainingSession session;
    LossHistoryModel history;
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    connect(&session, &TrainingSession::lossPointsAdded, &history, &LossHistoryModel::append);
    TrainingView view(ViewContext{.attention = &attention, .selection = &selection, .history = &history});
    session.open(std::move(loaded.trainer));
    QCOMPARE(history.rowCount(), kSteps);
    checkPlotted(view, expected);
  }

  // After Apply or Reset the history is cleared and the new plan set: every per-layer chart lists
  // the new experiment's layers at once, not the previous run's until the first step.
  void perLayerLegendsFollowThePlanBeforeTheFirstStep() {
    LossHistoryModel history;
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    TrainingView view(ViewContext{.attention = &attention, .selection = &selection, .history = &history});
    MetricChartView* grads = view.charts()[3];
    MetricChartView* entropy = view.charts()[4];
    MetricChartView* induction = view.layerDiagnostics()->chart(LayerDiagnosticsChart::Induction);
    LossPoint first;
    first.step = 1;
    first.layer_grad_norm = first.layer_entropy = {0.5, 0.25};
    history.setPlan(10, 2);
    history.append({first});
    for (MetricChartView* chart : {grads, entropy, induction}) QCOMPARE(chart->seriesCount(), 2);
    history.clear();  // as the window does on Apply: clear, then the new experiment's plan
    history.setPlan(20, 4);
    for (MetricChartView* chart : {grads, entropy, induction}) {
      QCOMPARE(chart->seriesCount(), 4);
      const QList<QAbstractSeries*> series = chart->chart()->series();
      QCOMPARE(series.size(), 4);
      QCOMPARE(series.back()->name(), QStringLiteral("layer 4"));
      QVERIFY(static_cast<QLineSeries*>(series.back())->points().isEmpty());
      QVERIFY(chart->chart()->legend()->isVisible());
    }
    QCOMPARE(view.charts()[0]->seriesCount(), 2);  // the loss chart keeps its two lines
    first.layer_grad_norm = first.layer_entropy = {0.5, 0.25, 0.125, 0.0625};
    history.append({first});  // the first step's own shape, as before
    QCOMPARE(grads->seriesCount(), 4);
  }

  void olderHistoriesWithoutDiagnosticsStillRead() {
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("history.csv")).toStdString();
    std::vector<TrainPoint> written(2);
    written[0].step = 1, written[1].step = 2;
    written[0].layer_entropy = written[1].layer_entropy = {1.5, 0.5};
    written[1].layer_diagnostics = {{0.25, 1.0 / 3}, {0.5, 0.125}, {0.75, 0.0625}, {0.1, 0.2}};
    QCOMPARE(QString::fromStdString(writeHistoryCsv(path, written)), QString());
    std::vector<TrainPoint> read;
    QCOMPARE(QString::fromStdString(readHistoryCsv(path, read)), QString());
    QVERIFY(read[0].layer_diagnostics.empty());
    QCOMPARE(read[1].layer_diagnostics.previous_token, written[1].layer_diagnostics.previous_token);
    QCOMPARE(read[1].layer_diagnostics.entropy, written[1].layer_diagnostics.entropy);
    QCOMPARE(read[1].layer_diagnostics.sink, written[1].layer_diagnostics.sink);
    // a file from before the diagnostics: no such columns, nothing measured
    std::vector<TrainPoint> old(1);
    old[0].step = 1, old[0].layer_entropy = {1.0};
    QCOMPARE(QString::fromStdString(writeHistoryCsv(path, old)), QString());
    QCOMPARE(QString::fromStdString(readHistoryCsv(path, read)), QString());
    QVERIFY(read[0].layer_diagnostics.empty());
    QCOMPARE(read[0].layer_entropy, std::vector<double>{1.0});
  }
};

QTEST_MAIN(LayerDiagnosticsTest)
#include "test_layer_diagnostics.moc"
