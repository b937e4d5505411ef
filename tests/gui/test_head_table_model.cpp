// The head table (models/head_table_model.h, views/head_table_view.h) on a small induction run:
// its rows equal the engine's diagnostics and importance on the same model snapshot, sorting
// orders rows by value, switching a head off goes through the session's head gains into the next
// snapshot (and the importance then says what the head would recover), and selecting a row
// selects that head in the shared selection, and back.
#include <QApplication>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTextStream>
#include <QtTest>
#include <cmath>

#include "analysis/head_importance.h"
#include "analysis/map_diagnostics.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "data/task.h"
#include "head_table_model.h"
#include "head_drop_chart.h"
#include "head_table_view.h"
#include "io/config_json.h"
#include "training_session.h"

using namespace attnlab;
using Gains = std::vector<std::vector<float>>;

namespace {

ExperimentConfig tinyInduction() {
  ExperimentConfig config;
  if (!loadPreset("induction", config).empty()) qFatal("induction preset");
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.context=24", "task.settings.length=10",
                        "train.batch=8", "train.steps=12", "train.eval_every=6", "train.threads=1"})
    if (!applyOverride(config, o).empty()) qFatal("override %s", o);
  return config;
}

double cell(const HeadTableModel& model, int layer, int head, int column) {
  return model.data(model.index(model.rowOf(layer, head), column), HeadTableModel::SortRole).toDouble();
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

}  // namespace

class HeadTableModelTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    connect(&session_, &TrainingSession::traced, &attention_, &AttentionMapModel::setTrace);
    session_.start(tinyInduction());
    QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Finished, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(attention_.snapshot() && attention_.snapshot()->step == 12, 20000);
  }

  void rowsEqualTheEngineOnTheSnapshot() {
    HeadTableModel model(&attention_, &session_);
    model.waitForIdle();
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(HeadTableModel::ColumnCount));
    QCOMPARE(model.diagnosticsStep(), 12);
    QCOMPARE(model.importanceStep(), 12);
    QVERIFY(model.hasAnswers());

    const ModelSnapshot& snapshot = *attention_.snapshot()->model;
    const RunData& run = *snapshot.run;
    std::string error;
    const std::unique_ptr<Task> task = makeTask(run.config.task, error);
    QVERIFY2(task, error.c_str());
    MapDiagnosticsProbe probe(*task, run.config.model.vocab, run.sequenceLength, HeadTableModel::kProbeBatch, HeadTableModel::kProbeSeed);
    const auto expected = probe.measure(*snapshot.model);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        QCOMPARE(cell(model, l, h, HeadTableModel::Layer), double(l + 1));
        QCOMPARE(cell(model, l, h, HeadTableModel::Head), double(h + 1));
        const MapDiagnostics& d = expected[l][h];
        QVERIFY(near(cell(model, l, h, HeadTableModel::Entropy), d.entropy));
        QVERIFY(near(cell(model, l, h, HeadTableModel::NormalisedEntropy), d.normalised_entropy));
        QVERIFY(near(cell(model, l, h, HeadTableModel::MeanDistance), d.mean_distance));
        QVERIFY(near(cell(model, l, h, HeadTableModel::Sink), d.sink));
        QVERIFY(near(cell(model, l, h, HeadTableModel::PreviousToken), d.previous_token));
        QVERIFY(near(cell(model, l, h, HeadTableModel::Induction), d.induction));
        QVERIFY(near(cell(model, l, h, HeadTableModel::EffectiveRank), d.effective_rank));
        QCOMPARE(model.data(model.index(model.rowOf(l, h), HeadTableModel::On), Qt::CheckStateRole).toInt(), int(Qt::Checked));
      }

    // Ablation importance of layer 2, head 1, by hand on a private copy.
    const std::unique_ptr<Model> copy = copyModel(*snapshot.model);
    const double intact = evaluateOn(*copy, run.evalBatches, false).loss;
    copy->setHeadGains(Gains{{1, 1}, {0, 1}});
    const double without = evaluateOn(*copy, run.evalBatches, false).loss;
    QVERIFY(near(cell(model, 1, 0, HeadTableModel::Ablation), without - intact));
    // With every head on, the importance and the curves are the engine's own report.
    copy->setHeadGains({});
    const HeadImportanceReport report = headImportanceReport(*copy, run.evalBatches, true, HeadTableModel::kDropOrderSeed);
    for (const HeadImportance& hi : report.heads) {
      QVERIFY(near(cell(model, hi.layer, hi.head, HeadTableModel::Ablation), hi.ablation));
      QVERIFY(near(cell(model, hi.layer, hi.head, HeadTableModel::Gradient), hi.gradient));
    }
    QCOMPARE(model.importance()->curves.size(), report.curves.size());
    for (size_t c = 0; c < report.curves.size(); ++c) {
      QCOMPARE(model.importance()->curves[c].order, report.curves[c].order);
      QCOMPARE(model.importance()->curves[c].removed, report.curves[c].removed);
      QCOMPARE(model.importance()->curves[c].metric.size(), size_t(5));
      for (size_t k = 0; k < 5; ++k) QVERIFY(near(model.importance()->curves[c].metric[k], report.curves[c].metric[k]));
    }
    QCOMPARE(snapshot.model->config().n_heads, 2);  // the shared snapshot was never touched: still no gains
    QVERIFY(snapshot.headGains.empty());
  }

  void sortingOrdersRowsByValue() {
    HeadTableModel model(&attention_, &session_);
    model.waitForIdle();
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(HeadTableModel::SortRole);
    for (int column : {int(HeadTableModel::Ablation), int(HeadTableModel::Entropy), int(HeadTableModel::Induction)}) {
      proxy.sort(column, Qt::DescendingOrder);
      std::vector<double> values;
      for (int row = 0; row < proxy.rowCount(); ++row)
        values.push_back(proxy.data(proxy.index(row, column), HeadTableModel::SortRole).toDouble());
      QCOMPARE(int(values.size()), 4);
      QVERIFY(std::is_sorted(values.rbegin(), values.rend()));
      QVERIFY(values.front() > values.back());  // distinct heads, distinct numbers
    }
  }

  void switchingAHeadOffReachesTheSessionAndTheNextSnapshot() {
    HeadTableModel model(&attention_, &session_);
    model.waitForIdle();
    QVERIFY(!model.anyOff());
    QVERIFY(model.setData(model.index(model.rowOf(1, 1), HeadTableModel::On), Qt::Unchecked, Qt::CheckStateRole));
    QCOMPARE(session_.headGains(), (Gains{{1, 1}, {1, 0}}));
    QVERIFY(!model.isOn(1, 1));
    QVERIFY(model.anyOff());
    QTRY_VERIFY_WITH_TIMEOUT(attention_.snapshot()->model->headGains == (Gains{{1, 1}, {1, 0}}), 20000);
    QVERIFY(attention_.isSwitchedOff(1, 1));  // what the other views mark
    QVERIFY(!attention_.isSwitchedOff(1, 0));
    model.waitForIdle();
    QCOMPARE(model.data(model.index(model.rowOf(1, 1), HeadTableModel::On), Qt::CheckStateRole).toInt(), int(Qt::Unchecked));

    // The importance is of the model as shown: an off head's number is the loss it would recover.
    const ModelSnapshot& snapshot = *attention_.snapshot()->model;
    const double shown = evaluateOn(*snapshot.model, snapshot.run->evalBatches, false).loss;  // its gains are set
    const std::unique_ptr<Model> copy = copyModel(*snapshot.model);
    const double allOn = evaluateOn(*copy, snapshot.run->evalBatches, false).loss;
    QVERIFY(near(model.importance()->shown.loss, shown));
    QVERIFY(near(cell(model, 1, 1, HeadTableModel::Ablation), shown - allOn));
    QCOMPARE(model.importance()->curves.front().removed.size(), size_t(3));  // only heads still on are dropped

    model.switchAllOn();
    QVERIFY(session_.headGains().empty());
    QTRY_VERIFY_WITH_TIMEOUT(attention_.snapshot()->model->headGains.empty(), 20000);
  }

  void aRowSelectsTheHeadEverywhereAndFollowsTheSelection() {
    HeadTableView view(ViewContext{.attention = &attention_, .selection = &selection_, .session = &session_});
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.tableModel()->waitForIdle();
    QTableView* table = view.table();
    QCOMPARE(table->model()->rowCount(), 4);

    table->sortByColumn(HeadTableModel::Ablation, Qt::DescendingOrder);
    const int visualRow = 2;
    const QModelIndex source = static_cast<QSortFilterProxyModel*>(table->model())->mapToSource(table->model()->index(visualRow, 0));
    const int layer = view.tableModel()->layerOf(source.row()), head = view.tableModel()->headOf(source.row());
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(table->model()->index(visualRow, 1)).center());
    QCOMPARE(selection_.layer(), layer);
    QCOMPARE(selection_.head(), head);

    selection_.select(0, 1);  // chosen elsewhere: the row follows
    const QModelIndex current = static_cast<QSortFilterProxyModel*>(table->model())->mapToSource(table->currentIndex());
    QCOMPARE(view.tableModel()->layerOf(current.row()), 0);
    QCOMPARE(view.tableModel()->headOf(current.row()), 1);
    QCOMPARE(selection_.layer(), 0);  // following did not select anything back

    QString csv;
    QTextStream out(&csv);
    view.writeCsv(out);
    const QStringList lines = csv.trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 5);
    QVERIFY(lines[0].startsWith(QStringLiteral("layer,head,variant,entropy")));
    QVERIFY(lines[1].startsWith(QStringLiteral("1,1,softmax,")));
  }

  // The head-drop chart's own CSV has one row per drawn point of each order, with the curves' numbers,
  // and hovering a point names its order, heads removed and value.
  void theHeadDropChartHoversAndExportsItsCurves() {
    HeadTableView view(ViewContext{.attention = &attention_, .selection = &selection_, .session = &session_});
    view.resize(1000, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.settle();
    const LiveHeadImportance* importance = view.tableModel()->importance();
    QVERIFY(importance);
    HeadDropChart* chart = view.chartView();
    QVERIFY(chart->hasExportData());
    QString csv;
    QTextStream out(&csv);
    chart->writeCsv(out);
    const QStringList lines = csv.trimmed().split(QLatin1Char('\n'));
    const bool accuracy = view.tableModel()->hasAnswers();
    QCOMPARE(lines[0], accuracy ? QStringLiteral("order,heads_removed,loss,accuracy") : QStringLiteral("order,heads_removed,loss"));
    size_t points = 0;
    for (const HeadDropCurve& curve : importance->curves) points += curve.count.size();
    QCOMPARE(size_t(lines.size() - 1), points);
    const HeadDropCurve& descending = importance->curves[1];
    QCOMPARE(descending.order, std::string("descending"));
    const int row = 1 + int(importance->curves[0].count.size()) + 1;  // descending, second point
    const QStringList fields = lines[row].split(QLatin1Char(','));
    QCOMPARE(fields[0], QStringLiteral("descending"));
    QCOMPARE(fields[1].toInt(), descending.count[1]);
    const auto printed = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); };  // 7 digits
    QVERIFY(printed(fields[2].toDouble(), descending.loss[1]));
    if (accuracy) QVERIFY(printed(fields[3].toDouble(), descending.metric[1]));

    // Hovering near x = 1.2 on the "most important first" curve snaps to its point at 1 head removed.
    const QString text = chart->hoverText(1, QPointF(1.2, 0.0));
    QVERIFY2(text.startsWith(QStringLiteral("most important first: 1 head(s) removed, ")), qPrintable(text));
    QVERIFY2(text.endsWith(QString::number(descending.metric[1], 'f', 3)), qPrintable(text));
    QVERIFY(chart->chart()->title().contains(QStringLiteral("one by one")));  // 4 heads: every count is drawn
  }

  void cleanupTestCase() { session_.stop(); }

 private:
  TrainingSession session_;
  AttentionMapModel attention_;
  HeadSelection selection_{&attention_};
};

QTEST_MAIN(HeadTableModelTest)
#include "test_head_table_model.moc"
