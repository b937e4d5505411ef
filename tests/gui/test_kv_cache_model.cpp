// The KV-cache view's model: a generation through the cache on a tiny random model gives the
// known cell states, live counts and bytes; matched runs keep the reference's counts; bad input
// gives a message. Plus the view drawing its raster offscreen.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QMenu>
#include <QStandardItemModel>
#include <QToolButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include <cmath>
#include <functional>
#include <map>

#include "attention_map_model.h"
#include "head_selection.h"
#include "core/random.h"
#include "kv_cache_model.h"
#include "kv_cache_view.h"
#include "kv_occupancy_raster.h"
#include "kv_policy_link.h"
#include "study_report.h"
#include "svg_cells.h"
#include "model/workspace.h"

using namespace attnlab;

namespace {

constexpr int kLayers = 2, kHeads = 4, kDModel = 16, kContext = 16;

std::shared_ptr<const ModelSnapshot> tinySnapshot(const std::function<void(ModelConfig&)>& change = {}) {
  ModelConfig c;
  c.vocab = 9;
  c.d_model = kDModel;
  c.n_layers = kLayers;
  c.n_heads = kHeads;
  c.d_ff = 32;
  c.context = kContext;
  if (change) change(c);
  auto model = std::make_shared<Model>(c, 3);
  Rng rng(17);
  for (auto& p : model->params().all())
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, 0.3f);
  auto run = std::make_shared<RunData>();
  std::vector<std::string> words;
  for (int i = 0; i < c.vocab; ++i) words.push_back("w" + std::to_string(i));
  run->vocabulary = std::make_shared<Vocabulary>(words, Vocabulary::Level::Word);
  run->sequenceLength = kContext;
  auto snapshot = std::make_shared<ModelSnapshot>();
  snapshot->step = 7;
  snapshot->model = model;
  snapshot->run = run;
  return snapshot;
}

const std::vector<int> kPrompt = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6};

KvCacheRequest request(const std::vector<OccupancyRunSpec>& runs, bool matched = false) {
  KvCacheRequest r;
  r.model = tinySnapshot();
  r.probe = kPrompt;
  r.tokens = 6;
  r.runs = runs;
  r.matched = matched;
  return r;
}

std::shared_ptr<const KvCacheResult> runToEnd(KvCacheModel& model, const KvCacheRequest& r) {
  model.run(r);
  model.waitForIdle();
  QCoreApplication::processEvents();
  return model.result();
}

}  // namespace

class TestKvCacheModel : public QObject {
  Q_OBJECT

 private slots:
  void windowKeepsTheMostRecentFour() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"window", "4", "head"}}));
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& r = result->record;
    QCOMPARE(r.steps, 16);
    QCOMPARE(r.promptLength, 10);
    QCOMPARE(r.runs.size(), size_t(1));
    const OccupancyRun& run = r.runs[0];
    QCOMPARE(run.tokens.size(), size_t(16));
    QCOMPARE(result->tokenText[0][0], QStringLiteral("w1"));
    const size_t bytesPerEntry = 2 * (kDModel / kHeads) * 4;
    QCOMPARE(r.bytesPerEntry, bytesPerEntry);
    for (int step = 0; step < r.steps; ++step) {
      const int live = std::min(step + 1, 4);
      QCOMPARE(run.liveEntries[step], live * kLayers * kHeads);
      QCOMPARE(run.bytes[step], size_t(live * kLayers * kHeads) * bytesPerEntry);
      for (int l = 0; l < kLayers; ++l)
        for (int k = 0; k < kHeads; ++k) {
          const HeadRaster& h = r.raster(0, l, k);
          for (int p = 0; p < r.steps; ++p) {
            CellState want = CellState::NotYet;
            if (p <= step) want = p > step - 4 ? CellState::Live : p == step - 4 ? CellState::EvictedNow : CellState::EvictedEarlier;
            QCOMPARE(int(h.cells[r.cell(step, p)]), int(want));
          }
        }
    }
    QCOMPARE(run.rules.size(), size_t(1));
    QVERIFY(QString::fromStdString(run.rules[0]).startsWith("window: "));
    // teacher-forced loss where the next prompt token is known, none after it
    for (int step = 0; step < r.steps; ++step) QCOMPARE(std::isfinite(run.loss[step]), step < 9);
  }

  void fullEvictsNothing() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"full", "", "head"}}));
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& r = result->record;
    for (int step = 0; step < r.steps; ++step) {
      QCOMPARE(r.runs[0].liveEntries[step], (step + 1) * kLayers * kHeads);
      for (int l = 0; l < kLayers; ++l)
        for (int k = 0; k < kHeads; ++k)
          for (int p = 0; p <= step; ++p) QCOMPARE(int(r.raster(0, l, k).cells[r.cell(step, p)]), int(CellState::Live));
    }
  }

  void streamingLlmMarksSinks() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"streaming_llm", "6", "head"}}));
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& r = result->record;
    const HeadRaster& h = r.raster(0, 1, 2);
    const int last = r.steps - 1;  // 4 sinks (the default) and the 2 most recent
    for (int p = 0; p <= last; ++p) {
      const CellState want = p < 4           ? CellState::Sink
                             : p >= last - 1 ? CellState::Live
                             : p == last - 2 ? CellState::EvictedNow
                                             : CellState::EvictedEarlier;
      QCOMPARE(int(h.cells[r.cell(last, p)]), int(want));
    }
  }

  // H2O protects a recent window of floor(0.5 B) entries: those are marked as such, the heavy
  // hitters it keeps by score as plain live entries.
  void h2oMarksItsRecentWindow() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"h2o", "6", "head"}}));
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& r = result->record;
    const HeadRaster& h = r.raster(0, 1, 2);
    const int last = r.steps - 1;
    int recent = 0, live = 0;
    for (int p = 0; p <= last; ++p) {
      const CellState c = h.cells[r.cell(last, p)];
      if (p > last - 3) QCOMPARE(int(c), int(CellState::KeptRecent));
      recent += c == CellState::KeptRecent;
      live += c == CellState::Live;
    }
    QCOMPARE(recent, 3);
    QCOMPARE(live, 3);
  }

  // The KV view hands its result to the attention maps, which mark for each query the keys the
  // cache no longer held when it was decoded: under a window of 4, query q saw keys q-4 .. q.
  void attentionMapsMarkWhatTheWindowEvicted() {
    KvCacheModel kv;
    const auto result = runToEnd(kv, request({{"window", "4", "head"}}));
    QVERIFY2(result, qPrintable(kv.message()));
    auto trace = std::make_shared<TraceSnapshot>();
    trace->model = tinySnapshot();
    trace->step = trace->model->step;
    trace->trace.tokens = kPrompt;
    Workspace ws;
    const std::vector<int> targets(kPrompt.size(), 0);
    trace->model->model->forward(ws, kPrompt.data(), targets.data(), 1, static_cast<int>(kPrompt.size()), &trace->trace);
    AttentionMapModel attention;
    attention.setTrace(trace);
    QVERIFY(!attention.hasEvictions());
    attention.setEvictions(result, 0);
    QVERIFY(attention.hasEvictions());
    QCOMPARE(attention.evictionLabel(), QStringLiteral("window, 4 per head"));
    const int n = static_cast<int>(kPrompt.size());
    for (int l = 0; l < kLayers; ++l)
      for (int h = 0; h < kHeads; ++h) {
        const HeadMap map = attention.headMap(l, h);
        for (int q = 0; q < n; ++q)
          for (int k = 0; k < n; ++k) QCOMPARE(map.isEvicted(q, k), k < q - 4);
      }
    // another probe (or another model step) is not what the cache decoded: no marks
    auto other = std::make_shared<TraceSnapshot>(*trace);
    other->trace.tokens[3] = 1;
    attention.setTrace(other);
    QVERIFY(!attention.hasEvictions());
    QVERIFY(!attention.headMap(0, 0).isEvicted(9, 0));
    auto later = std::make_shared<TraceSnapshot>(*trace);
    later->step += 1;
    attention.setTrace(later);
    QVERIFY(!attention.hasEvictions());
  }

  // A policy's own settings reach the engine: two sinks instead of the default four.
  void aPolicySettingChangesWhatItKeeps() {
    KvCacheModel model;
    KvCacheRequest r = request({{"streaming_llm", "6", "head", {{"sinks", 2}}}});
    const auto result = runToEnd(model, r);
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& rec = result->record;
    const HeadRaster& h = rec.raster(0, 0, 0);
    const int last = rec.steps - 1;
    int sinks = 0;
    for (int p = 0; p <= last; ++p) sinks += h.cells[rec.cell(last, p)] == CellState::Sink;
    QCOMPARE(sinks, 2);
    QCOMPARE(QString::fromStdString(rec.runs[0].label()), QStringLiteral("streaming_llm (sinks 2), 6 per head"));
    // out of its range: a message, no result
    KvCacheModel bad;
    bad.run(request({{"streaming_llm", "6", "head", {{"sinks", -1}}}}));
    bad.waitForIdle();
    QCoreApplication::processEvents();
    QVERIFY(!bad.result());
    QVERIFY2(bad.message().contains("sinks"), qPrintable(bad.message()));
  }

  void matchedRunsKeepTheReferenceCounts() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"h2o", "30%", "layer"}, {"window", "", "head"}, {"k_norm", "", "head"}}, true));
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& r = result->record;
    QCOMPARE(r.runs.size(), size_t(3));
    QVERIFY(r.runs[1].matched && r.runs[2].matched);
    QCOMPARE(r.runs[1].headLive, r.runs[0].headLive);
    QCOMPARE(r.runs[2].headLive, r.runs[0].headLive);
    QCOMPARE(r.runs[2].liveEntries, r.runs[0].liveEntries);
    QCOMPARE(r.runs[2].bytes, r.runs[0].bytes);
  }

  void sameBudgetWithoutMatching() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"window", "5", "head"}, {"random", "5", "head"}, {"full", "", "head"}}));
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& r = result->record;
    QCOMPARE(r.runs[1].liveEntries, r.runs[0].liveEntries);
    QCOMPARE(r.runs[2].liveEntries.back(), r.steps * kLayers * kHeads);
  }

  void badInputGivesAMessage() {
    KvCacheModel model;
    QSignalSpy failed(&model, &KvCacheModel::failed);
    QVERIFY(!runToEnd(model, request({{"window", "0", "head"}})));
    QCOMPARE(failed.count(), 1);
    QVERIFY(!model.message().isEmpty() && !model.message().contains('\n'));
    QVERIFY(!runToEnd(model, request({{"no_such_policy", "4", "head"}})));
    QVERIFY(model.message().contains("no_such_policy"));
    QVERIFY(!runToEnd(model, request({{"window", "", "head"}})));
    QVERIFY(model.message().contains("needs a budget"));
    QVERIFY(!runToEnd(model, request({{"window", "4", "diagonal"}})));
    QVERIFY(!runToEnd(model, request({{"learned_gate", "", "head"}})));
    QVERIFY(model.message().contains("retention_gate"));
    KvCacheRequest text = request({{"window", "4", "head"}});
    text.prompt = KvCacheRequest::Prompt::Text;
    text.text = "w1 w2 zebra";
    QVERIFY(!runToEnd(model, text));
    QVERIFY(model.message().contains("zebra"));
    QCOMPARE(failed.count(), 6);
    // A pasted 5,000-character word is quoted back shortened, in the message and in the signal.
    text.text = QStringLiteral("w1 ") + QString(5000, QLatin1Char('q'));
    QVERIFY(!runToEnd(model, text));
    QVERIFY2(model.message().size() < 200 && model.message().contains(QChar(0x2026)), qPrintable(model.message()));
    QCOMPARE(failed.last().at(0).toString(), model.message());
  }

  // momentum decodes through the cache now (its cache holds the high-passed keys), under eviction too
  void momentumDecodesThroughTheCache() {
    KvCacheModel model;
    KvCacheRequest r = request({{"window", "4", "head"}});
    r.model = tinySnapshot([](ModelConfig& c) { c.attention = {"momentum"}; });
    QVERIFY2(runToEnd(model, r), qPrintable(model.message()));
  }

  void linearLayersAndGroupedHeads() {
    KvCacheModel model;
    KvCacheRequest r = request({{"window", "4", "head"}});
    r.model = tinySnapshot([](ModelConfig& c) {
      c.attention = {"linear", "softmax"};  // layer 0 decodes from a constant-size state
      c.positional = "none";
      c.n_kv_heads = 2;                     // two query heads read each KV head
    });
    const auto result = runToEnd(model, r);
    QVERIFY2(result, qPrintable(model.message()));
    const OccupancyRecord& rec = result->record;
    QCOMPARE(rec.kvHeads, 2);
    QCOMPARE(rec.group, 2);
    QVERIFY(!rec.cachesLayer[0] && rec.cachesLayer[1]);
    QVERIFY(rec.raster(0, 0, 0).cells.empty());
    const OccupancyRun& run = rec.runs[0];
    QVERIFY(run.stateBytes > 0);
    QCOMPARE(run.liveEntries.back(), 4 * 2);  // one caching layer x two KV heads
    QCOMPARE(run.bytes.back(), size_t(4 * 2) * 2 * (kDModel / kHeads) * 4);
  }

  void longPromptIsCutToTheContext() {
    KvCacheModel model;
    KvCacheRequest r = request({{"window", "4", "head"}});
    r.probe = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6};
    const auto result = runToEnd(model, r);
    QVERIFY2(result, qPrintable(model.message()));
    QCOMPARE(result->record.promptLength, kContext - 6);
    QVERIFY(result->note.contains("cut"));
  }

  void rasterDrawsCells() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"window", "4", "head"}}));
    QVERIFY(result);
    KvOccupancyRaster raster;
    raster.resize(500, 500);
    raster.show(result, 0, 0, 0);
    const QImage image = raster.grab().toImage();
    // the live colour and the evicted-this-step colour both appear
    bool live = false, evicted = false;
    for (int y = 0; y < image.height(); y += 2)
      for (int x = 0; x < image.width(); x += 2) {
        const QRgb c = image.pixel(x, y);
        live |= c == KvOccupancyRaster::stateColour(CellState::Live).rgb();
        evicted |= c == KvOccupancyRaster::ruleColour(0).rgb();
      }
    QVERIFY(live);
    QVERIFY(evicted);
    // the hover text names the state, and for an entry gone earlier when and why it left
    QVERIFY(raster.describeCell(5, 0).startsWith("evicted earlier at step 4 (window: "));
    QCOMPARE(raster.describeCell(5, 3), QStringLiteral("live"));
    QCOMPARE(raster.describeCell(2, 9), QStringLiteral("not yet generated"));
    QCOMPARE(raster.describeCell(16, 0), QString());
  }

  // Drawn into SVG (as the KV view exports), the raster is a rectangle per cell, coloured by state.
  void theSvgRasterDrawsCellsAsRectangles() {
    KvCacheModel model;
    const auto result = runToEnd(model, request({{"window", "4", "head"}}));
    QVERIFY(result);
    KvOccupancyRaster raster;
    raster.resize(500, 500);
    raster.show(result, 0, 0, 0);
    QTemporaryDir dir;
    const QString file = dir.filePath("raster.svg");
    QVERIFY(testing::renderSvg(raster, file));
    const testing::SvgContents svg = testing::readSvg(file);
    QCOMPARE(svg.error, QString());
    QCOMPARE(svg.images, 0);
    QVERIFY2(svg.texts.contains(KvOccupancyRaster::stateName(CellState::Live)), qPrintable(svg.texts.join(" | ")));  // the legend
    // The cells are the steps x steps rectangles of one size; the raster's corner is the first.
    const int steps = result->record.steps;
    std::map<std::pair<int, int>, int> bySize;  // in hundredths of a pixel
    for (const testing::SvgRect& r : svg.rects) ++bySize[{std::lround(r.rect.width() * 100), std::lround(r.rect.height() * 100)}];
    QSizeF cell;
    for (const auto& [size, count] : bySize)
      if (count == steps * steps) cell = QSizeF(size.first / 100.0, size.second / 100.0);
    QVERIFY2(!cell.isEmpty(), "no steps x steps cells of one size");
    QPointF corner(1e9, 1e9);
    for (const testing::SvgRect& r : svg.ofSize(cell)) corner = QPointF(std::min(corner.x(), r.rect.left()), std::min(corner.y(), r.rect.top()));
    auto at = [&](int step, int position) { return corner + QPointF(step * cell.width(), position * cell.height()); };
    QCOMPARE(raster.describeCell(5, 3), QStringLiteral("live"));
    QCOMPARE(svg.fillAt(at(5, 3), cell), KvOccupancyRaster::stateColour(CellState::Live));
    QVERIFY(raster.describeCell(5, 0).startsWith("evicted earlier"));
    QCOMPARE(svg.fillAt(at(5, 0), cell), KvOccupancyRaster::stateColour(CellState::EvictedEarlier));
  }

  void studyReportOpensTheRepositorysReport() {
    StudyReport report;
    QVERIFY(!report.load(QStringLiteral("/nonexistent-folder")).isEmpty());
    QCOMPARE(report.load(QStringLiteral(ATTNLAB_REPORT_DIR)), QString());
    QVERIFY(report.tabs()->count() >= 2);
    auto* browser = qobject_cast<QTextBrowser*>(report.tabs()->widget(0));
    QVERIFY(browser && browser->toPlainText().contains("Live-cache study"));
    QFile csv(QStringLiteral(ATTNLAB_REPORT_DIR "/results.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
    const int rows = QString::fromUtf8(csv.readAll()).trimmed().count('\n');  // lines after the header
    QTableWidget* table = nullptr;
    for (int i = 0; i < report.tabs()->count(); ++i)
      if (report.tabs()->tabText(i) == "results.csv") table = qobject_cast<QTableWidget*>(report.tabs()->widget(i));
    QVERIFY(table);
    QCOMPARE(table->rowCount(), rows);
    QCOMPARE(table->horizontalHeaderItem(0)->text(), QStringLiteral("attention"));
    QCOMPARE(StudyReport::splitCsvLine(QStringLiteral("a,\"b,\"\"c\"\"\",,d")), QStringList({"a", "b,\"c\"", "", "d"}));
  }

  // Views sharing a link (a comparison's panes) follow each other's policy, budget and settings;
  // unlinked, each keeps its own; a view joining later starts on the linked choice.
  void linkedViewsShareOnePolicy() {
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    KvPolicyLink link;
    KvCacheView a(ViewContext{.attention = &attention, .selection = &selection, .kvLink = &link});
    KvCacheView b(ViewContext{.attention = &attention, .selection = &selection, .kvLink = &link});
    auto policyOf = [](KvCacheView& v) { return v.findChild<QComboBox*>(QStringLiteral("kvPolicy")); };
    auto budgetOf = [](KvCacheView& v) { return v.findChild<QLineEdit*>(QStringLiteral("kvBudget")); };
    QVERIFY(policyOf(a) && budgetOf(a) && policyOf(b) && budgetOf(b));
    policyOf(a)->setCurrentText(QStringLiteral("h2o"));
    emit policyOf(a)->activated(policyOf(a)->currentIndex());
    QCOMPARE(policyOf(b)->currentText(), QStringLiteral("h2o"));
    budgetOf(a)->setText(QStringLiteral("25%"));
    emit budgetOf(a)->editingFinished();
    QCOMPARE(budgetOf(b)->text(), QStringLiteral("25%"));
    auto* ratio = b.findChild<QDoubleSpinBox*>(QStringLiteral("policySetting.recent_ratio"));
    QVERIFY(ratio);
    ratio->setValue(0.25);
    QCOMPARE(a.findChild<QDoubleSpinBox*>(QStringLiteral("policySetting.recent_ratio"))->value(), 0.25);
    KvCacheView late(ViewContext{.attention = &attention, .selection = &selection, .kvLink = &link});
    QCOMPARE(policyOf(late)->currentText(), QStringLiteral("h2o"));
    QCOMPARE(budgetOf(late)->text(), QStringLiteral("25%"));
    link.setLinked(false);
    policyOf(a)->setCurrentText(QStringLiteral("window"));
    emit policyOf(a)->activated(policyOf(a)->currentIndex());
    QCOMPARE(policyOf(b)->currentText(), QStringLiteral("h2o"));
  }

  // learned_gate reads the retention gate: on a model without one it is offered disabled, with the
  // policy's reason as tooltip, in the picker and the comparison menu; with the gate it is usable.
  void aPolicyTheModelCannotRunIsDisabledWithItsReason() {
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    KvCacheView view(ViewContext{.attention = &attention, .selection = &selection});
    auto* picker = view.findChild<QComboBox*>(QStringLiteral("kvPolicy"));
    QVERIFY(picker);
    const int gate = picker->findText(QStringLiteral("learned_gate"));
    QVERIFY(gate >= 0);
    auto* items = qobject_cast<QStandardItemModel*>(picker->model());
    QMenu* compared = nullptr;
    for (auto* button : view.findChildren<QToolButton*>())
      if (button->menu()) compared = button->menu();
    QVERIFY(compared);
    auto gateAction = [&] {
      for (QAction* a : compared->actions())
        if (a->text() == QStringLiteral("learned_gate")) return a;
      return static_cast<QAction*>(nullptr);
    };
    QVERIFY(gateAction());
    auto show = [&](bool gated) {
      auto trace = std::make_shared<TraceSnapshot>();
      const auto made = tinySnapshot([gated](ModelConfig& c) { c.retention_gate = gated; });
      auto run = std::make_shared<RunData>(*made->run);
      run->config.model = made->model->config();  // the run's configuration is what the view reads
      auto snapshot = std::make_shared<ModelSnapshot>(*made);
      snapshot->run = run;
      trace->model = snapshot;
      trace->trace.tokens = kPrompt;
      trace->vocabulary = trace->model->run->vocabulary;
      trace->maxProbeLength = kContext;
      attention.setTrace(trace);
    };
    show(false);
    QVERIFY(!items->item(gate)->isEnabled());
    QVERIFY(picker->itemData(gate, Qt::ToolTipRole).toString().contains("retention_gate"));
    QVERIFY(items->item(picker->findText(QStringLiteral("h2o")))->isEnabled());
    QVERIFY(!gateAction()->isEnabled() && gateAction()->toolTip().contains("retention_gate"));
    show(true);
    QVERIFY(items->item(gate)->isEnabled());
    QVERIFY(!picker->itemData(gate, Qt::ToolTipRole).toString().contains("needs a model"));
    QCOMPARE(picker->currentText(), QStringLiteral("learned_gate"));  // the gated model's default
    QVERIFY(gateAction()->isEnabled());
    emit picker->activated(gate);  // the user's choice
    show(false);  // chosen for the gated model, refused by the next one: back to the default
    QCOMPARE(picker->currentText(), QStringLiteral("streaming_llm"));
  }

  void viewRunsOnceWithAModel() {
    AttentionMapModel attention;
    HeadSelection attentionSelection(&attention);
    KvCacheView view(ViewContext{.attention = &attention, .selection = &attentionSelection});
    view.resize(1400, 800);
    view.show();
    auto trace = std::make_shared<TraceSnapshot>();
    trace->model = tinySnapshot();
    trace->trace.tokens = kPrompt;
    trace->vocabulary = trace->model->run->vocabulary;
    trace->maxProbeLength = kContext;
    attention.setTrace(trace);
    QTRY_VERIFY_WITH_TIMEOUT(view.model()->result() != nullptr, 20000);
    QVERIFY(view.hasExportData());
    // the default policy (streaming_llm) shows its own setting, in the registry's range
    auto* sinks = view.findChild<QDoubleSpinBox*>(QStringLiteral("policySetting.sinks"));
    QVERIFY(sinks);
    QCOMPARE(sinks->value(), 4.0);
    QCOMPARE(sinks->minimum(), 0.0);
    QString csv;
    QTextStream out(&csv);
    view.writeCsv(out);
    QVERIFY(csv.count('\n') > 16);
    // the defaults compare more policies at the same budget; ticking the matched protocol runs again
    const auto first = view.model()->result();
    QVERIFY(first->record.runs.size() >= 2 && !first->record.runs.back().matched);
    auto* matched = view.findChild<QCheckBox*>("matchedProtocol");
    QVERIFY(matched);
    matched->setChecked(true);
    QTRY_VERIFY_WITH_TIMEOUT(view.model()->result() != first, 20000);
    const OccupancyRecord& r = view.model()->result()->record;
    int followers = 0;
    for (size_t i = 1; i < r.runs.size(); ++i)
      if (r.runs[i].spec.policy != "full") {
        QVERIFY(r.runs[i].matched);
        QCOMPARE(r.runs[i].headLive, r.runs[0].headLive);
        ++followers;
      }
    QVERIFY(followers > 0);
  }
};

QTEST_MAIN(TestKvCacheModel)
#include "test_kv_cache_model.moc"
