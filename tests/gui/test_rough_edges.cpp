// What a new user tripped over (issue 21), each checked where it happens: the panel's pickers and
// the wheel, the tab bar that moved, the first step's chart axes, a task without answers, a
// refused long token, the time-left estimate, the SVG heatmap, the comparison's colour scale and
// Help opening at the shown view's section.
#include <QComboBox>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QTabBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QWheelEvent>
#include <QLineSeries>
#include <QtTest>
#include <cmath>
#include <limits>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "comparison_window.h"
#include "embedding_tab.h"
#include "experiment_panel.h"
#include "head_selection.h"
#include "launch_options.h"
#include "loss_history_model.h"
#include "main_window.h"
#include "metric_chart_view.h"
#include "number_field.h"
#include "probe_editor.h"
#include "qk_embedding_model.h"
#include "shared_colour_scale.h"
#include "step_timer.h"
#include "tiny_experiment.h"
#include "training_rate.h"
#include "training_session.h"
#include "training_view.h"
#include "view_export.h"
#include "view_kind.h"

using namespace attnlab;

namespace {

// One layer, one head, three tokens, causal, its largest weight `top`.
std::shared_ptr<TraceSnapshot> threeTokens(float top) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->trace.tokens = {4, 9, 2};
  snapshot->trace.labels = {"the", "cat", "sat"};
  const float m = -std::numeric_limits<float>::infinity();
  HeadTrace head;
  head.weights.resize(3, 3);
  head.weights << top, 0, 0, top / 2, top / 2, 0, 0, top / 4, top * 3 / 4;
  head.scores.resize(3, 3);
  head.scores << 1, m, m, 1, 1, m, 0, 1, 2;
  LayerTrace layer;
  layer.variant = "softmax";
  layer.heads.push_back(head);
  snapshot->trace.layers.push_back(layer);
  return snapshot;
}

QStringList tickLabels(const QValueAxis* axis) {
  QStringList labels;
  for (int i = 0; i < axis->tickCount(); ++i) {
    const double v = axis->min() + i * (axis->max() - axis->min()) / (axis->tickCount() - 1);
    const QByteArray format = axis->labelFormat().toLatin1();
    labels << (format.contains('d') ? QString::asprintf(format.constData(), int(std::lround(v))) : QString::asprintf(format.constData(), v));
  }
  return labels;
}

}  // namespace

class RoughEdgesTest : public QObject {
  Q_OBJECT
 private slots:
  void theWheelScrollsThePanelNotAnUnfocusedPicker() {
    ExperimentPanel panel;
    panel.resize(360, 300);  // shorter than its editors: it scrolls
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto* scroll = panel.findChild<QScrollArea*>();
    auto* picker = panel.findChild<QComboBox*>(QStringLiteral("task.name"));
    if (!picker) picker = panel.findChildren<QComboBox*>().value(0);
    QVERIFY(scroll && picker);
    QCOMPARE(picker->focusPolicy(), Qt::StrongFocus);
    QVERIFY(scroll->verticalScrollBar()->maximum() > 0);
    const int before = picker->currentIndex(), scrolled = scroll->verticalScrollBar()->value();
    const QPoint at = picker->rect().center();
    QWheelEvent wheel(at, picker->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(picker, &wheel);
    QCOMPARE(picker->currentIndex(), before);                     // the setting stays
    QVERIFY(scroll->verticalScrollBar()->value() > scrolled);     // the panel scrolled instead
  }

  // On a 1366 x 768 screen the window fits, and the experiment panel's editors get their full
  // width (its horizontal scroll bar is off, so anything narrower would cut them).
  void theWindowAndPanelFitA1366x768Screen() {
    MainWindow window(testing::tinyConfig(10), QStringLiteral("default"));
    QVERIFY2(window.minimumSizeHint().width() <= 1366 && window.minimumSizeHint().height() <= 768,
             qPrintable(QString("minimum %1 x %2").arg(window.minimumSizeHint().width()).arg(window.minimumSizeHint().height())));
    window.resize(1366, 768);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QApplication::processEvents();
    QVERIFY(window.width() <= 1366 && window.height() <= 768);
    auto* panel = window.findChild<ExperimentPanel*>();
    QVERIFY(panel && panel->isVisible());
    auto* scroll = panel->findChild<QScrollArea*>();
    QVERIFY(scroll && scroll->widget());
    QVERIFY2(scroll->viewport()->width() >= scroll->widget()->minimumSizeHint().width(),
             qPrintable(QString("editors need %1 px, the panel shows %2").arg(scroll->widget()->minimumSizeHint().width()).arg(scroll->viewport()->width())));
    QVERIFY(window.tabs()->width() >= 700);  // and the views keep most of the screen
  }

  // After a preset is edited and applied the window no longer presents it as the preset: the
  // name says "(edited)", the status label's tooltip gives what changed, not "Preset ...", and
  // the per-layer charts list the new experiment's layers before its first step.
  void anAppliedEditIsMarkedAndItsLayersShowAtOnce() {
    MainWindow window(testing::tinyConfig(10), QStringLiteral("default"));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.applyPreset(QStringLiteral("induction")));
    auto* label = window.findChild<QLabel*>(QStringLiteral("experimentLabel"));
    QVERIFY(label);
    QVERIFY2(label->toolTip().startsWith("Preset"), qPrintable(label->toolTip()));
    ExperimentPanel& panel = window.experimentPanel();
    panel.field("model.n_layers")->setText("3");
    QVERIFY(panel.apply());
    QCOMPARE(window.config().name, std::string("Induction heads (edited)"));
    QVERIFY2(window.windowTitle().contains("(edited)"), qPrintable(window.windowTitle()));
    QVERIFY2(!label->toolTip().contains("Preset") && label->toolTip().contains(QString("model.n_layers 2 \u2192 3")),
             qPrintable(label->toolTip()));
    auto* training = window.view<TrainingView>();
    QVERIFY(training);
    QCOMPARE(window.lossHistory().rowCount(), 0);
    for (int chart : {3, 4}) QCOMPARE(training->charts()[chart]->seriesCount(), 3);  // gradient norm, entropy
  }

  // Once the experiment trains, the panel's time per step comes from the run's own speed (its
  // steps/s times its FLOPs per step), not from the small model timed at start.
  void theTimeEstimateLearnsFromTheRun() {
    TrainingRate::shared()->set(0);  // no rate yet, and the start-up measurement dropped
    MainWindow window(testing::tinyConfig(30), QStringLiteral("default"));
    QVERIFY(window.experimentPanel().timeText().contains("unknown"));
    window.startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), TrainingSession::State::Finished, 60000);
    QVERIFY(TrainingRate::shared()->known());
    const double estimate = window.experimentPanel().secondsPerStep();
    QVERIFY2(estimate > 0 && estimate < 1, qPrintable(QString::number(estimate)));  // a tiny model's step, measured
    QVERIFY2(window.experimentPanel().timeText().contains("about"), qPrintable(window.experimentPanel().timeText()));
  }

  void theTabBarDoesNotMoveBetweenTabs() {
    MainWindow window(testing::tinyConfig(10), QStringLiteral("default"));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.showView(QStringLiteral("training"));
    QApplication::processEvents();
    const int onTraining = window.tabs()->mapTo(&window, QPoint()).y();
    window.showView(QStringLiteral("attention"));
    QApplication::processEvents();
    QCOMPARE(window.tabs()->mapTo(&window, QPoint()).y(), onTraining);
    QVERIFY(window.probeEditor()->isVisible());
    QVERIFY(window.probeEditor()->mapTo(&window, QPoint()).y() > onTraining);  // the probe row sits under the tabs
  }

  void helpOpensTheGuideAtTheShownViewsSection() {
    MainWindow window(testing::tinyConfig(10), QStringLiteral("default"));
    window.show();
    QAction* guide = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
      if (action->shortcut() == QKeySequence(QKeySequence::HelpContents)) guide = action;
    QVERIFY(guide);
    for (const QString id : {QStringLiteral("kv"), QStringLiteral("spectra")}) {
      window.showView(id);
      guide->trigger();
      QTextBrowser* browser = nullptr;  // the guide's own window (the tour dock has a browser too)
    for (QTextBrowser* b : window.findChildren<QTextBrowser*>())
      if (b->window() != &window) browser = b;
      QVERIFY(browser);
      QCOMPARE(browser->textCursor().block().text(), viewKinds()[viewKindIndex(id)].guideSection);
      QVERIFY(browser->verticalScrollBar()->value() > 0);  // scrolled down to it
    }
  }

  void theFirstStepsChartsHaveDistinctSensibleTicks() {
    LossHistoryModel history;
    history.setPlannedSteps(600);
    MetricChartView loss(QStringLiteral("Loss"), QStringLiteral("nats"), &history, [](const LossPoint&) {
      return std::vector<MetricSeries>{{QStringLiteral("loss"), Qt::blue, [](const LossPoint& p) { return p.loss; }}};
    });
    MetricChartView lr(QStringLiteral("Learning rate"), QStringLiteral("lr"), &history, [](const LossPoint&) {
      return std::vector<MetricSeries>{{QStringLiteral("lr"), Qt::gray, [](const LossPoint& p) { return p.lr; }}};
    });
    loss.setTotalSteps(600);
    lr.setTotalSteps(600);
    LossPoint first;
    first.step = 1;
    first.loss = 5.16;
    first.lr = 6e-5;
    history.append({first});
    for (const MetricChartView* chart : {&loss, &lr}) {
      for (const QValueAxis* axis : {chart->valueAxis(), chart->stepAxis()}) {
        const QStringList labels = tickLabels(axis);
        QVERIFY2(labels.size() >= 3 && QSet<QString>(labels.begin(), labels.end()).size() == labels.size(),
                 qPrintable(labels.join(QStringLiteral(", "))));
      }
    }
    QCOMPARE(loss.stepAxis()->max(), 10.0);  // steps 0-10, whole-numbered
    LossPoint later = first;
    later.step = 500;
    history.append({later});
    QTRY_COMPARE(loss.stepAxis()->max(), 600.0);  // a 600-step run's axis ends at 600 (at the next redraw)
    later.step = 501;
    history.append({later});
    const auto* line = qobject_cast<const QLineSeries*>(loss.chart()->series().first());
    QCOMPARE(line->count(), 2);  // the third point waits for the redraw ...
    loss.flush();
    QCOMPARE(line->count(), 3);  // ... unless a screenshot asks for it now
  }

  // Qt Charts restrokes a line on every append: a long run must not draw every step (the monkey
  // test found the UI thread saturated by a 100,000-step loss line), yet spikes must stay visible.
  void aLongRunDrawsABoundedLineThatKeepsItsSpikes() {
    LossHistoryModel history;
    history.setPlannedSteps(100000);
    MetricChartView loss(QStringLiteral("Loss"), QStringLiteral("nats"), &history, [](const LossPoint&) {
      return std::vector<MetricSeries>{{QStringLiteral("loss"), Qt::blue, [](const LossPoint& p) { return p.loss; }}};
    });
    double lowest = 1e9;
    for (int batch = 0; batch < 2000; ++batch) {  // deliveries of 50 steps, as a fast run sends them
      std::vector<LossPoint> points(50);
      for (int i = 0; i < 50; ++i) {
        points[i].step = batch * 50 + i + 1;
        points[i].loss = points[i].step == 77777 ? 50.0 : 3.0 + std::sin(points[i].step * 0.37) / (1 + points[i].step * 1e-3);
        lowest = std::min(lowest, points[i].loss);
      }
      history.append(points);
    }
    const auto* line = qobject_cast<QLineSeries*>(loss.chart()->series().at(0));
    QTRY_VERIFY(line->count() > 0 && line->points().back().x() > 99000);  // drawn within a fifth of a second
    QVERIFY(line->count() <= 2000 && line->count() >= 500);
    double top = 0, bottom = 1e9;
    for (const QPointF& p : line->points()) top = std::max(top, p.y()), bottom = std::min(bottom, p.y());
    QCOMPARE(top, 50.0);       // the spike at step 77,777 is drawn
    QCOMPARE(bottom, lowest);  // and so is the lowest loss
  }

  void aTaskWithoutAnswersSaysSoInsteadOfAnEmptyAccuracyChart() {
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    LossHistoryModel history;
    TrainingView view(ViewContext{.attention = &attention, .selection = &selection, .history = &history});
    MetricChartView* accuracy = view.charts().at(1);
    QCOMPARE(accuracy->note(), QString());
    auto run = std::make_shared<RunData>();
    run->hasAnswers = false;
    auto model = std::make_shared<ModelSnapshot>();
    model->run = run;
    auto trace = threeTokens(1);
    trace->model = model;
    attention.setTrace(trace);
    QVERIFY2(accuracy->note().contains(QStringLiteral("no answer tokens in this task")), qPrintable(accuracy->note()));
    // A view made over a run already traced (a comparison pane switching to Training) says so too.
    TrainingView later(ViewContext{.attention = &attention, .selection = &selection, .history = &history});
    QVERIFY(later.charts().at(1)->note().contains(QStringLiteral("no answer tokens in this task")));
    run->hasAnswers = true;
    attention.setTrace(threeTokens(1));
    QCOMPARE(accuracy->note(), QString());
  }

  void aRefusedLongTokenIsShortened() {
    const QString token(5000, QLatin1Char('q'));
    const QString message = shortenLongWords(QStringLiteral("unknown token '%1' at position 0").arg(token));
    QVERIFY2(message.size() < 100, qPrintable(message));
    QVERIFY(message.contains(QChar(0x2026)) && message.endsWith(QStringLiteral("at position 0")));
    QCOMPARE(shortenLongWords(QStringLiteral("unknown token 'qqqzzz'")), QStringLiteral("unknown token 'qqqzzz'"));
  }

  void theTimeLeftEstimateDoesNotSwingOnASlowStep() {
    StepTimer timer;
    QVERIFY(std::isnan(timer.secondsPerStep()));
    timer.add(30.0);  // the first step allocates and traces: left out
    for (int i = 0; i < 63; ++i) timer.add(0.1);
    timer.add(5.0);  // a validation step, 50 times as slow
    // Its share of the window, not a jump to 5 s per step.
    QVERIFY(std::abs(timer.secondsPerStep() - (63 * 0.1 + 5.0) / 64) < 1e-12);
    for (size_t i = 0; i < StepTimer::kWindow; ++i) timer.add(0.1);
    QVERIFY(std::abs(timer.secondsPerStep() - 0.1) < 1e-12);  // it has left the window
    QVERIFY(std::abs(timer.secondsLeft(600) - 60.0) < 1e-9);
  }

  // At step 1 the bar says --:-- instead of extrapolating the first step (3:34:01 once, for a run
  // of a few minutes); the estimate appears once StepTimer::kSettled steps after it are timed.
  void theTimeLeftEstimateWaitsForTheFirstSteps() {
    StepTimer timer;
    timer.add(6.4);  // the first step
    for (size_t i = 0; i + 1 < StepTimer::kSettled; ++i) {
      timer.add(0.2);
      QVERIFY(!timer.settled());
      QVERIFY(std::isnan(timer.secondsLeft(2000)));
    }
    timer.add(0.2);
    QVERIFY(timer.settled());
    QVERIFY(std::abs(timer.secondsLeft(2000) - 400.0) < 1e-9);  // the first step's 6.4 s counts nowhere
  }

  // Started without a preset, the app opens induction heads (formed after about 250 steps), not the toy
  // language, which is the preset "default".
  void theFirstStartOpensTheInductionPreset() {
    LaunchOptions options;
    QCOMPARE(parseLaunchOptions({"attnlab"}, options), QString());
    QCOMPARE(options.presetName, QStringLiteral("induction"));
    QCOMPARE(options.config.task.name, std::string("induction"));
    QVERIFY(!options.experimentChosen);  // a last experiment, where there is one, still comes first
    LaunchOptions toy;
    QCOMPARE(parseLaunchOptions({"attnlab", "--preset", "default"}, toy), QString());
    QCOMPARE(toy.config.task.name, std::string("toy_language"));
  }

  void theSvgHeatmapDrawsCellsAndLabelsAsVectors() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(500, 420);
    model.setTrace(threeTokens(1));
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("map.svg"));
    QCOMPARE(exportView(view, ExportFormat::Svg, file), QString());
    QFile svg(file);
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll());
    QVERIFY2(!text.contains(QStringLiteral("<image")), "the heatmap is embedded as a bitmap");
    QVERIFY2(text.count(QStringLiteral("<rect")) + text.count(QStringLiteral("<path")) >= 9, "fewer shapes than cells");
    QVERIFY(text.contains(QStringLiteral("<text")) && text.contains(QStringLiteral("cat")));  // labels are text
  }

  void aClickedHeatmapRowIsTheRunsQuery() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    AttentionHeatmapView view(ViewContext{.attention = &model, .selection = &selection});
    view.resize(500, 420);
    model.setTrace(threeTokens(1));
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(1, 0).center());
    QCOMPARE(selection.query(), 1);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(1, 2).center());
    QCOMPARE(selection.query(), -1);  // a second click on the row clears it
  }

  // The embedding's queries are named by probe position (here it embeds positions 1 and 2 only, as
  // an embedding of an older, shorter probe would), and the run's query survives one it lacks.
  void theEmbeddingAndTheRunShareTheQueryByPosition() {
    AttentionMapModel model;
    HeadSelection selection(&model);
    EmbeddingTab tab(ViewContext{.attention = &model, .selection = &selection});
    model.setTrace(threeTokens(1));
    auto data = std::make_shared<QkEmbeddingData>();
    for (int p = 0; p < 3; ++p) data->keys.push_back({QVector3D(p, 0, 0), 0, p, "k", ""});
    for (int p = 1; p < 3; ++p) data->queries.push_back({QVector3D(p, 1, 0), 0, p, "q", ""});
    data->attention = {{{0, 0.5f}, {1, 0.5f}}, {{1, 0.25f}, {2, 0.75f}}};
    tab.model()->setData(data);
    selection.selectQuery(2);
    QCOMPARE(tab.model()->selectedQuery(), 1);  // the embedding's second query is position 2
    tab.model()->selectQuery(0);
    QCOMPARE(selection.query(), 1);
    selection.selectQuery(0);  // a position this embedding lacks
    QCOMPARE(tab.model()->selectedQuery(), -1);
    QCOMPARE(selection.query(), 0);  // kept, not cleared by the embedding
  }

  void theComparisonSharesOneColourScaleByDefault() {
    AttentionMapModel strong, weak;
    HeadSelection strongRun(&strong), weakRun(&weak);
    SharedColourScale scale;
    scale.add(&strongRun);
    scale.add(&weakRun);
    strong.setTrace(threeTokens(1.0f));
    weak.setTrace(threeTokens(0.5f));
    AttentionHeatmapView weakView(ViewContext{.attention = &weak, .selection = &weakRun, .colourScale = &scale});
    QCOMPARE(weakView.colourTop(), 1.0);  // equal colours are equal weights across the runs
    scale.setShared(false);
    QCOMPARE(weakView.colourTop(), 0.5);  // per run: its own largest weight
    ComparisonWindow window({testing::tinyConfig(5), testing::tinyConfig(5)});
    QVERIFY(window.colourScale()->isShared());
  }
};

QTEST_MAIN(RoughEdgesTest)
#include "test_rough_edges.moc"
