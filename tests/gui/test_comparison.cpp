// The comparison: the difference of two known maps is exactly A - B; the linked selection follows
// a choice made in any run and clamps where a head is missing; the metrics table has a row per
// metric and a column per run, with cache figures decoded from a real model; and the window
// trains two runs side by side on one probe, links their selection, trains one after another,
// and saves and reopens as one file while a corrupt file is refused with a message. New Comparison
// adds a saved experiment folder, which opens with its weights.
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>

#include "analysis/analysis.h"
#include "attention_difference_model.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "comparison_metrics_model.h"
#include "comparison_pane.h"
#include "comparison_window.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "launch_options.h"
#include "main_window.h"
#include "new_comparison_dialog.h"
#include "probe_editor.h"
#include "selection_link.h"
#include "train/trainer.h"
#include "view_export.h"
#include "view_kind.h"

using namespace attnlab;
using State = TrainingSession::State;

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

// `layers` x `heads` copies of a causal 3 x 3 map whose visible weights are `w` row by row.
std::shared_ptr<TraceSnapshot> knownTrace(std::vector<float> w, int layers = 1, int heads = 1, std::vector<int> tokens = {4, 9, 2}) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->trace.tokens = tokens;
  snapshot->trace.labels = {"a", "b", "c"};
  HeadTrace head;
  head.weights.resize(3, 3);
  head.weights << w[0], 0, 0, w[1], w[2], 0, w[3], w[4], w[5];
  head.scores.resize(3, 3);
  head.scores << 0, kMasked, kMasked, 0, 0, kMasked, 0, 0, 0;
  for (int l = 0; l < layers; ++l) {
    LayerTrace layer;
    layer.variant = "softmax";
    for (int h = 0; h < heads; ++h) layer.heads.push_back(head);
    snapshot->trace.layers.push_back(layer);
  }
  return snapshot;
}

// The default preset made tiny: a step takes milliseconds.
ExperimentConfig tiny(const char* attention, int steps) {
  ExperimentConfig c;
  if (!loadPreset("default", c).empty()) qFatal("default preset");
  for (const std::string o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64", "model.context=24",
                              "train.batch=4", "train.eval_every=5", "train.threads=1"})
    if (!applyOverride(c, o).empty()) qFatal("override %s", o.c_str());
  c.model.attention = {attention};
  c.name = std::string("tiny ") + attention;
  c.train.steps = steps;
  return c;
}

// A model snapshot as the session publishes it, from a trainer after `steps` steps.
std::shared_ptr<const ModelSnapshot> snapshotOf(const ExperimentConfig& config, int steps) {
  Trainer trainer(config);
  for (int i = 0; i < steps; ++i) trainer.trainStep();
  auto run = std::make_shared<RunData>();
  run->config = config;
  run->evalBatches = validationBatches(trainer, 1, 1);
  auto snapshot = std::make_shared<ModelSnapshot>();
  snapshot->step = steps;
  snapshot->model = copyModel(trainer.model());
  snapshot->run = run;
  return snapshot;
}

bool allTraced(const ComparisonWindow& window, int step) {
  for (int i = 0; i < window.paneCount(); ++i)
    if (window.pane(i)->tracedStep() < step) return false;
  return true;
}

}  // namespace

class ComparisonTest : public QObject {
  Q_OBJECT
 private slots:
  void differenceIsExactlyAMinusB() {
    AttentionMapModel a, b;
    HeadSelection aSelection(&a), bSelection(&b);
    a.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}));
    b.setTrace(knownTrace({1, 0.9f, 0.1f, 0.6f, 0.3f, 0.1f}));
    AttentionDifferenceModel difference;
    QSignalSpy changed(&difference, &AttentionDifferenceModel::differenceChanged);
    difference.setRuns(&aSelection, &bSelection);
    QVERIFY(difference.hasDifference());
    QCOMPARE(difference.size(), 3);
    QCOMPARE(difference.difference(0, 0), 0.0f);
    QCOMPARE(difference.difference(1, 0), 0.5f - 0.9f);
    QCOMPARE(difference.difference(1, 1), 0.5f - 0.1f);
    QCOMPARE(difference.difference(2, 0), 0.2f - 0.6f);
    QCOMPARE(difference.difference(2, 2), 0.5f - 0.1f);
    QVERIFY(difference.isMasked(0, 1) && difference.isMasked(1, 2) && !difference.isMasked(2, 1));
    QCOMPARE(difference.maxAbsDifference(), std::abs(0.2f - 0.6f));
    // It follows the maps live.
    const int before = changed.count();
    b.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}));
    QVERIFY(changed.count() > before);
    QCOMPARE(difference.maxAbsDifference(), 0.0f);

    // Diverging colours: white at 0, red where A is higher, blue where B is.
    QCOMPARE(AttentionDifferenceModel::colourFor(0, 1), QColor(255, 255, 255));
    const QColor red = AttentionDifferenceModel::colourFor(1, 1), blue = AttentionDifferenceModel::colourFor(-2, 1);
    QVERIFY(red.red() > 150 && red.blue() < 60);
    QVERIFY(blue.blue() > 150 && blue.red() < 60);
  }

  void noDifferenceWithoutTheSameProbeAndHead() {
    AttentionMapModel a, b;
    HeadSelection aSelection(&a), bSelection(&b);
    AttentionDifferenceModel difference;
    difference.setRuns(&aSelection, &bSelection);
    QVERIFY(!difference.hasDifference());
    QVERIFY(difference.reason().contains("press Train"));
    a.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}));
    b.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 1, 1, {4, 9, 3}));
    QVERIFY(difference.reason().contains("different probes"));
    a.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 2, 2));
    b.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}));
    aSelection.select(1, 1);
    QVERIFY2(difference.reason().contains("different heads"), qPrintable(difference.reason()));
  }

  void selectionIsLinkedAndClampedWhereAHeadIsMissing() {
    AttentionMapModel big, small;
    HeadSelection bigSelection(&big), smallSelection(&small);
    SelectionLink link;
    link.add(&bigSelection);
    link.add(&smallSelection);
    big.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 3, 4));
    small.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 2, 2));
    QCOMPARE(link.maxLayers(), 3);
    QCOMPARE(link.maxHeads(0), 4);
    // A choice made in one map (as a click in its model view makes it) reaches the other.
    smallSelection.select(1, 1);
    QCOMPARE(link.layer(), 1);
    QCOMPARE(bigSelection.layer(), 1);
    QCOMPARE(bigSelection.head(), 1);
    // A head only the big model has: the small one shows its nearest and says so, and its
    // fallback does not pull the big one back.
    bigSelection.select(2, 3);
    QCOMPARE(link.layer(), 2);
    QCOMPARE(link.head(), 3);
    QCOMPARE(smallSelection.layer(), 1);
    QCOMPARE(smallSelection.head(), 1);
    QVERIFY(link.note(&smallSelection).contains("2 layers"));
    QCOMPARE(link.note(&bigSelection), QString());
    QCOMPARE(bigSelection.layer(), 2);
    // A new trace keeps the shared selection; a cleared and retraced map takes it again.
    big.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 3, 4));
    QCOMPARE(bigSelection.head(), 3);
    big.clear();
    big.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 3, 4));
    QCOMPARE(bigSelection.layer(), 2);
    QCOMPARE(bigSelection.head(), 3);
    QCOMPARE(link.layer(), 2);
    // A query chosen in one run is chosen in the other (one past the probe's end is ignored).
    smallSelection.selectQuery(2);
    QCOMPARE(bigSelection.query(), 2);
    bigSelection.selectQuery(-1);
    QCOMPARE(smallSelection.query(), -1);
    bigSelection.selectQuery(7);  // a 3-token probe: ignored, and nothing to share
    QCOMPARE(bigSelection.query(), -1);
    QCOMPARE(smallSelection.query(), -1);
  }

  void aQueryPastAShorterProbeIsClearedThere() {
    AttentionMapModel longer, shorter;
    HeadSelection longRun(&longer), shortRun(&shorter);
    SelectionLink link;
    link.add(&longRun);
    link.add(&shortRun);
    longer.setTrace(knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}));
    auto twoTokens = knownTrace({1, 0.5f, 0.5f, 0.2f, 0.3f, 0.5f}, 1, 1, {4, 9});
    HeadTrace& head = twoTokens->trace.layers[0].heads[0];
    head.weights = head.weights.topLeftCorner(2, 2).eval();
    head.scores = head.scores.topLeftCorner(2, 2).eval();
    shorter.setTrace(twoTokens);
    shortRun.selectQuery(1);
    QCOMPARE(longRun.query(), 1);
    longRun.selectQuery(2);  // past the two-token probe: not an older, different query there
    QCOMPARE(shortRun.query(), -1);
    QCOMPARE(longRun.query(), 2);
  }

  void metricsTableHasARowPerMetricAndAColumnPerRun() {
    const ExperimentConfig softmax = tiny("softmax", 10), sigmoid = tiny("sigmoid", 10);
    ComparisonMetricsModel metrics;
    metrics.setRuns({"1: softmax", "2: sigmoid"}, {softmax, sigmoid});
    QCOMPARE(metrics.rowCount(), int(ComparisonMetricsModel::RowCount));
    QCOMPARE(metrics.columnCount(), 2);
    QCOMPARE(metrics.headerData(1, Qt::Horizontal).toString(), QString("2: sigmoid"));
    QCOMPARE(metrics.headerData(1, Qt::Horizontal, Qt::ToolTipRole).toString(), QString("tiny sigmoid"));
    QCOMPARE(metrics.headerData(ComparisonMetricsModel::EvictionPplRow, Qt::Vertical).toString(), QString("PPL with eviction"));
    // KV bytes per token come from the shape: 2 layers x K and V x 2 heads x 16 dims x 4 bytes.
    QCOMPARE(metrics.value(ComparisonMetricsModel::KvBytesRow, 0), 2.0 * 2 * 2 * 16 * 4);

    ProgressSnapshot p;
    p.step = 7;
    p.loss = 2.5;
    p.tokens_per_second = 1234;
    metrics.setProgress(1, p);
    QCOMPARE(metrics.data(metrics.index(ComparisonMetricsModel::LossRow, 1)).toString(), QString("2.500"));
    QCOMPARE(metrics.data(metrics.index(ComparisonMetricsModel::TokensPerSecondRow, 1)).toString(), QString("1234"));
    QVERIFY(std::isnan(metrics.value(ComparisonMetricsModel::LossRow, 0)));

    // Cache figures from a real model: full cache vs 4 entries per head.
    QCOMPARE(metrics.setEviction("window", "4"), QString());
    metrics.evaluate(0, snapshotOf(softmax, 3));
    QCOMPARE(metrics.data(metrics.index(ComparisonMetricsModel::DensePplRow, 0)).toString(), QString("evaluating\u2026"));
    metrics.waitForIdle();
    const double dense = metrics.value(ComparisonMetricsModel::DensePplRow, 0);
    const double evicted = metrics.value(ComparisonMetricsModel::EvictionPplRow, 0);
    const double live = metrics.value(ComparisonMetricsModel::LiveShareRow, 0);
    QVERIFY2(dense > 1 && std::isfinite(evicted), qPrintable(QString("%1 %2").arg(dense).arg(evicted)));
    QVERIFY2(live > 0 && live < 0.5, qPrintable(QString::number(live)));  // 4 of up to 24 positions
    QCOMPARE(metrics.value(ComparisonMetricsModel::LiveKvBytesRow, 0), live * 512);
    QCOMPARE(metrics.value(ComparisonMetricsModel::EvaluatedStepRow, 0), 3.0);
    QCOMPARE(metrics.data(metrics.index(ComparisonMetricsModel::GatePplRow, 0)).toString(), QString("no gate"));
    // A policy that needs a budget says so; "full" without one keeps everything, as the dense run.
    QCOMPARE(metrics.setEviction("window", "unlimited"), QString());
    metrics.waitForIdle();
    QVERIFY2(metrics.problem(0).contains("budget"), qPrintable(metrics.problem(0)));
    QCOMPARE(metrics.setEviction("full", "unlimited"), QString());
    metrics.waitForIdle();
    QCOMPARE(metrics.value(ComparisonMetricsModel::EvictionPplRow, 0), dense);
    QCOMPARE(metrics.value(ComparisonMetricsModel::LiveShareRow, 0), 1.0);

    // A policy the model cannot run says why, in the cell's tooltip.
    QCOMPARE(metrics.setEviction("learned_gate", "16"), QString());
    metrics.waitForIdle();
    QVERIFY2(metrics.problem(0).contains("retention_gate"), qPrintable(metrics.problem(0)));
    QCOMPARE(metrics.data(metrics.index(ComparisonMetricsModel::EvictionPplRow, 0), Qt::ToolTipRole).toString(), metrics.problem(0));
    QVERIFY(!metrics.setEviction("no_such_policy", "16").isEmpty());
    // A gated model: the gate alone keeps part of the cache, and PPL is measured with that.
    ExperimentConfig gated = softmax;
    gated.model.retention_gate = true;
    gated.model.retention_sparsity = 0.5;
    metrics.setRuns({"gated", "plain"}, {gated, sigmoid});
    metrics.evaluate(0, snapshotOf(gated, 3));
    metrics.waitForIdle();
    QCOMPARE(metrics.problem(0), QString());
    const double gateShare = metrics.value(ComparisonMetricsModel::GateLiveShareRow, 0);
    QVERIFY2(gateShare > 0 && gateShare <= 1, qPrintable(QString::number(gateShare)));
    QVERIFY(std::isfinite(metrics.value(ComparisonMetricsModel::GatePplRow, 0)));
    QVERIFY(std::isfinite(metrics.value(ComparisonMetricsModel::EvictionPplRow, 0)));  // learned_gate, 16 per head
    QVERIFY(!metrics.setEviction("h2o", "-3").isEmpty());
  }

  void viewKindsListTheStandardViews() {
    // One table for the main window and the comparison. The names scripts pass to --view stay
    // (a new row may join them without editing this test); a comparison starts on the attention map.
    const QStringList ids = viewKindIds();
    for (const char* id : {"training", "attention", "model", "heads", "diagnostics", "kv", "spectra", "embedding"})
      QVERIFY2(ids.contains(QString(id)), id);
    QCOMPARE(ids.front(), QString("training"));  // the main window's first tab, Ctrl+1
    QCOMPARE(viewKindIndex("nope"), -1);
    ComparisonWindow window({tiny("softmax", 10), tiny("sigmoid", 10)});
    QCOMPARE(viewKinds()[window.viewKind()].id, QString("attention"));
  }

  void launchOptionsOpenAComparison() {
    LaunchOptions options;
    QCOMPARE(parseLaunchOptions({"attnlab", "--compare", "gated_softmax,gated_sigmoid", "--view", "model", "--steps", "30"}, options),
             QString());
    QCOMPARE(options.compare.size(), size_t(2));
    QVERIFY(options.compare[0].model.retention_gate && options.compare[1].model.retention_gate);
    QCOMPARE(options.compare[1].model.attention, std::vector<std::string>{"sigmoid"});
    QCOMPARE(options.compare[1].train.steps, 30);
    QCOMPARE(options.view, viewKindIndex("model"));
    const QList<QPair<QStringList, QString>> bad = {
        {{"attnlab", "--compare", "induction"}, "2 to 4 presets"},
        {{"attnlab", "--compare", "induction,nope"}, "unknown preset \"nope\""},
        {{"attnlab", "--compare", "induction,copy", "--view", "lines"}, "--view needs one of training, attention, model, heads"},
        {{"attnlab", "--compare", "a,b,c,d,e"}, "2 to 4 presets"}};
    for (const auto& [arguments, reason] : bad) {
      LaunchOptions out;
      const QString why = parseLaunchOptions(arguments, out);
      QVERIFY2(why.contains(reason), qPrintable(why));
    }
  }

  void theMainWindowHasACompareMenu() {
    MainWindow window(tiny("softmax", 10), QStringLiteral("default"));
    QStringList entries;
    for (QAction* menu : window.menuBar()->actions())
      if (menu->text() == QStringLiteral("&Compare"))
        for (QAction* action : menu->menu()->actions()) entries << action->text();
    QCOMPARE(entries, (QStringList{QStringLiteral("&New Comparison\u2026"), QStringLiteral("&Open Comparison\u2026")}));
  }

  void newComparisonDialogAcceptsTwoToFour() {
    NewComparisonDialog dialog(tiny("softmax", 10));
    QListWidget* list = dialog.list();
    QVERIFY(list->count() >= 12);  // the current experiment and every preset
    auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(!ok->isEnabled());  // only the current experiment is ticked
    list->item(2)->setCheckState(Qt::Checked);
    QVERIFY(ok->isEnabled());
    const std::vector<ExperimentConfig> chosen = dialog.chosen();
    QCOMPARE(chosen.size(), size_t(2));
    QCOMPARE(chosen[0].name, std::string("tiny softmax"));
    for (int i = 3; i < 6; ++i) list->item(i)->setCheckState(Qt::Checked);
    QVERIFY(!ok->isEnabled());  // five
  }

  // Add Saved Experiment...: a folder saved after 7 steps opens in its pane with those weights at
  // step 7; a foreign folder and a corrupt one are refused with the reason, the list unchanged.
  void newComparisonAddsASavedExperimentWithItsWeights() {
    QTemporaryDir dir;
    const QString saved = dir.filePath("saved-run");
    ExperimentConfig config = tiny("sigmoid", 400);
    config.name = "saved sigmoid";
    Trainer trainer(config);
    for (int i = 0; i < 7; ++i) trainer.trainStep();
    QCOMPARE(QString::fromStdString(saveCheckpoint(saved.toStdString(), trainer)), QString());

    NewComparisonDialog dialog(tiny("softmax", 10));
    const int rows = dialog.list()->count();
    QVERIFY2(dialog.addSavedExperiment(dir.path()).contains("config.json"), "a folder that is not a checkpoint");
    QFile::resize(saved + "/model.safetensors", 40);  // a copy of the run, cut short
    QVERIFY(QDir().mkpath(dir.filePath("cut")));
    for (const QString& name : QDir(saved).entryList(QDir::Files)) QVERIFY(QFile::copy(saved + "/" + name, dir.filePath("cut/" + name)));
    QVERIFY(!dialog.addSavedExperiment(dir.filePath("cut")).isEmpty());
    QCOMPARE(dialog.list()->count(), rows);
    QCOMPARE(dialog.chosen().size(), size_t(1));
    QCOMPARE(QString::fromStdString(saveCheckpoint(saved.toStdString(), trainer)), QString());  // whole again

    QCOMPARE(dialog.addSavedExperiment(saved), QString());
    QCOMPARE(dialog.list()->count(), rows + 1);
    QVERIFY2(dialog.list()->item(rows)->text().contains("step 7"), qPrintable(dialog.list()->item(rows)->text()));
    QVERIFY(dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());  // current + saved
    const QStringList buttons = [&dialog] {
      QStringList out;
      for (QPushButton* b : dialog.findChildren<QPushButton*>()) out << b->text();
      return out;
    }();
    QVERIFY2(buttons.contains(QStringLiteral("Add Saved Experiment\u2026")), qPrintable(buttons.join(", ")));

    std::unique_ptr<ComparisonWindow> window(comparisonFromDialog(dialog));
    QCOMPARE(window->paneCount(), 2);
    QCOMPARE(window->pane(1)->config().name, std::string("saved sigmoid"));
    QTRY_COMPARE_WITH_TIMEOUT(window->pane(1)->tracedStep(), 7, 20000);
    QCOMPARE(window->pane(1)->session()->state(), State::Paused);
    QVERIFY(!window->hasUnsavedSteps());  // its steps are the folder's
    const Model& shown = *window->pane(1)->attention()->snapshot()->model->model;
    const auto& want = trainer.model().params().all();
    QCOMPARE(shown.params().all().size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      QCOMPARE(shown.params().all()[i]->name, want[i]->name);
      QVERIFY2(shown.params().all()[i]->value == want[i]->value, want[i]->name.c_str());
    }
  }

  // The README's list of view names and the guide's comparison section name every view the
  // comparison's Show picker offers (made from the view table), in the README in the table's order.
  void theDocsNameEveryViewTheComparisonOffers() {
    ComparisonWindow window({tiny("softmax", 10), tiny("sigmoid", 10)});
    QComboBox* picker = nullptr;
    for (QComboBox* box : window.findChildren<QComboBox*>())
      if (box->toolTip() == QStringLiteral("The view every run shows")) picker = box;
    QVERIFY(picker);
    QCOMPARE(picker->count(), int(viewKinds().size()));
    QStringList ids;
    for (int i = 0; i < picker->count(); ++i) ids << picker->itemData(i).toString();
    auto read = [](const QString& file) {
      QFile in(file);
      return in.open(QIODevice::ReadOnly) ? QString::fromUtf8(in.readAll()) : QString();
    };
    const QString readme = read(QStringLiteral(ATTNLAB_SOURCE_DIR "/README.md"));
    const qsizetype from = readme.indexOf(QStringLiteral("NAME is any view:"));
    QVERIFY2(from >= 0, "README.md: no \"NAME is any view:\" list");
    QStringList listed;
    const QString list = readme.mid(from, readme.indexOf(QLatin1Char('('), from) - from);
    for (const QRegularExpressionMatch& m : QRegularExpression(QStringLiteral("`([a-z0-9_]+)`")).globalMatch(list)) listed << m.captured(1);
    QCOMPARE(listed, ids);
    const QString guide = read(QStringLiteral(ATTNLAB_SOURCE_DIR "/resources/guide/guide.md"));
    const qsizetype section = guide.indexOf(QStringLiteral("### Comparing experiments"));
    QVERIFY2(section >= 0, "guide.md: no comparison section");
    const QString comparing = guide.mid(section, guide.indexOf(QStringLiteral("\n#"), section + 1) - section).simplified();
    for (int i = 0; i < picker->count(); ++i)
      QVERIFY2(comparing.contains(picker->itemText(i)),
               qPrintable(QStringLiteral("guide.md's comparison section does not name the view \"%1\"").arg(picker->itemText(i))));
  }

  void twoRunsSideBySideShareProbeAndSelection() {
    ComparisonWindow window({tiny("softmax", 400), tiny("sigmoid", 400)});
    window.show();
    QCOMPARE(window.paneCount(), 2);
    QCOMPARE(window.findChildren<ComparisonPane*>().size(), 2);
    QVERIFY(window.threadsPerRun() * window.paneCount() <= std::max(window.paneCount(), QThread::idealThreadCount()));
    window.captureAfterSteps(6, QString());  // pause every run at step 6 (no picture: no file)
    window.trainAll();
    QTRY_VERIFY_WITH_TIMEOUT(allTraced(window, 6), 30000);
    QTRY_COMPARE_WITH_TIMEOUT(window.pane(1)->session()->state(), State::Paused, 10000);
    for (int i = 0; i < 2; ++i) QVERIFY(window.pane(i)->findChild<QWidget*>() != nullptr);
    // One probe: run 2 shows run 1's tokens.
    QTRY_COMPARE_WITH_TIMEOUT(window.pane(1)->attention()->snapshot()->trace.tokens,
                              window.pane(0)->attention()->snapshot()->trace.tokens, 10000);
    QCOMPARE(window.probeNote(), QString());
    // Selecting in pane 1 selects in pane 2.
    window.pane(0)->selection()->select(1, 1);
    QCOMPARE(window.pane(1)->selection()->layer(), 1);
    QCOMPARE(window.pane(1)->selection()->head(), 1);
    QVERIFY(window.difference()->hasDifference());
    QCOMPARE(window.difference()->layer(), 1);
    // A probe typed into the shared editor reaches both runs.
    const TraceSnapshot* first = window.pane(0)->attention()->snapshot();
    const std::vector<int> typed(first->trace.tokens.begin(), first->trace.tokens.begin() + 5);
    QCOMPARE(window.probeEditor()->submit(QString::fromStdString(first->vocabulary->decode(typed))), QString());
    for (int i = 0; i < 2; ++i)
      QTRY_COMPARE_WITH_TIMEOUT(window.pane(i)->attention()->snapshot()->trace.tokens, typed, 10000);
    QCOMPARE(window.pane(1)->selection()->head(), 1);  // the selection outlives the new probe
    // Every registered view kind can be shown for all panes at once, and exports from a pane.
    QTemporaryDir exports;
    for (int kind = 0; kind < int(viewKinds().size()); ++kind) {
      window.setViewKind(kind);
      for (int i = 0; i < 2; ++i) {
        const ViewInstance& made = window.pane(i)->viewInstance();
        QVERIFY(made.widget != nullptr);
        if (made.settle) made.settle();
        if (!made.exportable) continue;
        const QString file = exports.filePath(QStringLiteral("%1-%2.png").arg(viewKinds()[kind].id).arg(i));
        QCOMPARE(exportView(*made.exportable, ExportFormat::Png, file), QString());
        QVERIFY2(!QImage(file).isNull(), qPrintable(file));
      }
    }
    window.resetAll();
    QCOMPARE(window.pane(0)->session()->state(), State::Idle);
  }

  // build/bin/attnlab --compare ... --screenshot: the real program draws both runs and exits 0.
  void theAppTakesAScreenshotOfAComparison() {
    QTemporaryDir dir;
    const QString shot = dir.filePath("compare.png");
    QProcess app;  // on this test's platform (offscreen under ctest)
    app.start(QStringLiteral(ATTNLAB_APP), {"--compare", "induction,softmax_vs_sigmoid", "--steps", "6", "--quit-after-steps", "4",
                                            "--screenshot", shot});
    QVERIFY(app.waitForFinished(50000));
    QCOMPARE(app.exitCode(), 0);
    QVERIFY2(app.readAllStandardOutput().contains("saved"), "no 'saved' line");
    const QImage image(shot);
    QCOMPARE(image.size(), QSize(1600, 1000));
    // Both heatmaps are drawn: colourful pixels in the left and in the right half of the grid.
    auto colourful = [&image](int x0, int x1) {
      int count = 0;
      for (int y = 150; y < 700; y += 2)
        for (int x = x0; x < x1; x += 2) {
          const QColor c = image.pixelColor(x, y);
          count += std::max({c.red(), c.green(), c.blue()}) - std::min({c.red(), c.green(), c.blue()}) > 60;
        }
      return count;
    };
    QVERIFY(colourful(20, 540) > 500);
    QVERIFY(colourful(570, 1090) > 500);
  }

  // The metrics' eviction picker applies to every pane: learned_gate is disabled, with its reason,
  // while one pane's model has no retention gate, and offered when every pane has it.
  void theMetricsPickerDisablesAPolicyAPaneCannotRun() {
    ExperimentConfig gated = tiny("softmax", 8);
    gated.model.retention_gate = true;
    auto gateItem = [](ComparisonWindow& window) {
      auto* picker = window.findChild<QComboBox*>(QStringLiteral("metricsPolicy"));
      auto* items = picker ? qobject_cast<QStandardItemModel*>(picker->model()) : nullptr;
      const int i = picker ? picker->findText(QStringLiteral("learned_gate")) : -1;
      return i >= 0 && items ? items->item(i) : nullptr;
    };
    ComparisonWindow mixed({gated, tiny("sigmoid", 8)});
    QStandardItem* item = gateItem(mixed);
    QVERIFY(item);
    QVERIFY(!item->isEnabled());
    QVERIFY2(item->toolTip().contains("retention_gate"), qPrintable(item->toolTip()));
    ExperimentConfig gatedSigmoid = tiny("sigmoid", 8);
    gatedSigmoid.model.retention_gate = true;
    ComparisonWindow both({gated, gatedSigmoid});
    QVERIFY(gateItem(both) && gateItem(both)->isEnabled());
  }

  void oneAfterAnotherStartsTheNextWhenOneFinishes() {
    ComparisonWindow window({tiny("softmax", 8), tiny("sigmoid", 8)});
    window.setOneAfterAnother(true);
    QCOMPARE(window.pane(0)->config().train.threads, 1);
    State firstWhenSecondStarted = State::Idle;
    connect(window.pane(1), &ComparisonPane::stateChanged, &window, [&window, &firstWhenSecondStarted](int, State state) {
      if (state == State::Running) firstWhenSecondStarted = window.pane(0)->session()->state();
    });
    window.trainAll();
    QCOMPARE(window.pane(0)->session()->state(), State::Running);
    QCOMPARE(window.pane(1)->session()->state(), State::Idle);  // waits for run 1, and says so
    QVERIFY2(window.pane(1)->headerText().contains("Waiting"), qPrintable(window.pane(1)->headerText()));
    QTRY_COMPARE_WITH_TIMEOUT(window.pane(1)->session()->state(), State::Finished, 30000);
    QCOMPARE(window.pane(0)->session()->state(), State::Finished);
    QCOMPARE(firstWhenSecondStarted, State::Finished);
  }

  void savesAndReopensAsOneFile() {
    QTemporaryDir dir;
    const QString file = dir.filePath("pair.attnlab-compare");
    {
      ComparisonWindow window({tiny("softmax", 400), tiny("sigmoid", 400)});
      window.captureAfterSteps(5, QString());
      window.trainAll();
      QTRY_VERIFY_WITH_TIMEOUT(allTraced(window, 5), 30000);
      window.setViewKind(viewKindIndex("model"));
      window.selection()->select(1, 0);
      QTRY_COMPARE_WITH_TIMEOUT(window.pane(1)->progress().step, 5, 10000);
      QVERIFY(window.hasUnsavedSteps());
      QSignalSpy saved(&window, &ComparisonWindow::savedAs);
      window.saveAs(file);
      QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
      QCOMPARE(saved.first().at(1).toString(), QString());
      QVERIFY(!window.hasUnsavedSteps());
    }
    QVERIFY(QFile::exists(file));
    QVERIFY(QFile::exists(dir.filePath("pair.runs/run-1/model.safetensors")));
    QVERIFY(QFile::exists(dir.filePath("pair.runs/run-2/model.safetensors")));

    QString error;
    std::unique_ptr<ComparisonWindow> reopened(ComparisonWindow::open(file, error));
    QVERIFY2(reopened, qPrintable(error));
    QCOMPARE(reopened->paneCount(), 2);
    QCOMPARE(reopened->pane(1)->config().model.attention, std::vector<std::string>{"sigmoid"});
    QCOMPARE(viewKinds()[reopened->viewKind()].id, QString("model"));
    QTRY_VERIFY_WITH_TIMEOUT(allTraced(*reopened, 5), 20000);  // the weights came back, at their step
    QCOMPARE(reopened->pane(0)->session()->state(), State::Paused);
    QVERIFY(!reopened->hasUnsavedSteps());
    QTRY_COMPARE_WITH_TIMEOUT(reopened->pane(1)->selection()->layer(), 1, 5000);

    // A corrupt file and a foreign one are refused with the reason; nothing opens.
    QFile corrupt(dir.filePath("corrupt.attnlab-compare"));
    QVERIFY(corrupt.open(QIODevice::WriteOnly));
    corrupt.write("{\"format\": \"attnlab-comparison-1\", \"runs\": [");
    corrupt.close();
    QVERIFY(!ComparisonWindow::open(corrupt.fileName(), error));
    QVERIFY2(error.contains("not JSON"), qPrintable(error));
    QVERIFY(!ComparisonWindow::open(dir.filePath("pair.runs/run-1/config.json"), error));
    QVERIFY2(error.contains("not a comparison file"), qPrintable(error));
    // A checkpoint folder gone missing names the run.
    QVERIFY(QDir(dir.filePath("pair.runs/run-2")).removeRecursively());
    QVERIFY(!ComparisonWindow::open(file, error));
    QVERIFY2(error.startsWith("run 2:"), qPrintable(error));
  }
};

QTEST_MAIN(ComparisonTest)
#include "test_comparison.moc"
