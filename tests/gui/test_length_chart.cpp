// The length extrapolation chart (Lengths view, issue 17): its points are the engine's
// evaluateAtLength on the same model, a learned-position model's refusal is written in the chart
// area, and the comparison window draws one line per run in one chart.
#include <QLineSeries>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QtTest>

#include "analysis/analysis.h"
#include "attention_map_model.h"
#include "comparison_lengths.h"
#include "comparison_pane.h"
#include "comparison_window.h"
#include "head_selection.h"
#include "length_chart.h"
#include "length_sweep.h"
#include "length_view.h"
#include "positional/length_limit.h"
#include "tiny_experiment.h"
#include "train/length_eval.h"
#include "training_session.h"
#include "view_kind.h"

using namespace attnlab;

namespace {

// The induction task made tiny (it has answer tokens, so both charts have points).
ExperimentConfig tinyWith(const char* positional, int steps) {
  ExperimentConfig config;
  if (!loadPreset("induction", config).empty()) qFatal("induction preset");
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.context=24", "task.settings.length=10",
                        "train.batch=8", "train.eval_every=6", "train.threads=1", "train.eval_batches=2"})
    if (!applyOverride(config, o).empty()) qFatal("override %s", o);
  config.model.positional = positional;
  config.train.steps = steps;
  return config;
}

std::unique_ptr<Trainer> trained(const ExperimentConfig& config) {
  auto trainer = std::make_unique<Trainer>(config);
  while (!trainer->finished()) trainer->trainStep();
  return trainer;
}

// A session showing `trainer`, its traces feeding `attention`.
void openIn(TrainingSession& session, AttentionMapModel& attention, std::unique_ptr<Trainer> trainer) {
  QObject::connect(&session, &TrainingSession::traced, &attention, &AttentionMapModel::setTrace);
  const int steps = trainer->stepsDone();
  session.open(std::move(trainer));
  QTRY_VERIFY_WITH_TIMEOUT(attention.snapshot() && attention.snapshot()->step == steps, 20000);
}

}  // namespace

class LengthChartTest : public QObject {
  Q_OBJECT
 private slots:
  void pointsEqualTheEnginesLengthEvaluation() {
    TrainingSession session;
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    openIn(session, attention, trained(tinyWith("rope", 12)));
    LengthView view(ViewContext{.attention = &attention, .selection = &selection, .session = &session});
    view.findChild<QLineEdit*>(QStringLiteral("lengthMultiples"))->setText(QStringLiteral("1, 2, 4"));
    view.settle();

    const ModelSnapshot& snapshot = *attention.snapshot()->model;
    std::string error;
    const std::unique_ptr<Task> task = makeTask(snapshot.run->config.task, error);
    QVERIFY2(task, error.c_str());
    const int trainedLength = snapshot.run->sequenceLength;
    const QList<QLineSeries*> accuracy = view.chart()->series(LengthChart::Accuracy), loss = view.chart()->series(LengthChart::Loss);
    QCOMPARE(accuracy.size(), 1);
    QCOMPARE(loss.size(), 1);
    QCOMPARE(accuracy.front()->count(), 3);
    QCOMPARE(loss.front()->count(), 3);
    const double multiples[] = {1, 2, 4};
    for (int i = 0; i < 3; ++i) {
      const EvalResult expected =
          evaluateAtLength(snapshot.run->config, *task, *snapshot.model, trainedLength, int(multiples[i] * trainedLength));
      QCOMPARE(accuracy.front()->at(i).x(), multiples[i]);
      QCOMPARE(accuracy.front()->at(i).y(), 100 * expected.accuracy);  // exact: the same computation
      QCOMPARE(loss.front()->at(i).y(), expected.loss);
    }
    QVERIFY(view.chart()->note().isEmpty());
    QVERIFY(view.hasExportData());
    QString csv;
    QTextStream out(&csv);
    view.writeCsv(out);
    QCOMPARE(csv.count(QLatin1Char('\n')), 4);  // header and a row per length
    QVERIFY(view.chart()->hoverText(0, LengthChart::Loss, QPointF(2.1, 0)).contains(QStringLiteral("2x (%1 tokens)").arg(2 * trainedLength)));
  }

  void learnedPositionsShowTheRefusalInTheChart() {
    TrainingSession session;
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    openIn(session, attention, trained(tinyWith("learned", 4)));
    LengthView view(ViewContext{.attention = &attention, .selection = &selection, .session = &session});
    view.settle();  // 1, 2, 4, 8
    const ModelSnapshot& snapshot = *attention.snapshot()->model;
    const int trainedLength = snapshot.run->sequenceLength;
    int refused = 1;
    while (refused * trainedLength <= snapshot.model->config().context) refused *= 2;
    const std::string expected = lengthRefusal(snapshot.model->config(), refused * trainedLength);
    QVERIFY(!expected.empty());
    QCOMPARE(view.chart()->note(), QString::fromStdString(expected));
    QVERIFY(view.chart()->findChild<QLabel*>(QStringLiteral("lengthNote"))->isVisibleTo(view.chart()));
    // the lengths before the refusal are still drawn
    QCOMPARE(view.chart()->series(LengthChart::Loss).front()->count(), int(std::log2(refused)));
  }

  void badMultiplesSayWhy() {
    std::vector<double> m;
    QVERIFY(parseLengthMultiples(QStringLiteral("1, 2, x4"), m).isEmpty());
    QCOMPARE(m, (std::vector<double>{1, 2, 4}));
    QVERIFY(parseLengthMultiples(QStringLiteral("2, 1"), m).contains(QStringLiteral("increase")));
    QVERIFY(parseLengthMultiples(QStringLiteral("abc"), m).contains(QStringLiteral("not a length multiple")));
    QVERIFY(parseLengthMultiples(QStringLiteral(""), m).contains(QStringLiteral("at least one")));
  }

  void comparisonDrawsOneLinePerRun() {
    ComparisonWindow window({tinyWith("rope", 6), tinyWith("alibi", 6)});
    window.setViewKind(viewKindIndex(QStringLiteral("lengths")));
    for (int i = 0; i < window.paneCount(); ++i) {
      const int steps = 6;
      window.pane(i)->session()->open(trained(window.pane(i)->config()));
      QTRY_VERIFY_WITH_TIMEOUT(window.pane(i)->attention()->snapshot() && window.pane(i)->attention()->snapshot()->step == steps, 20000);
    }
    QVERIFY(window.lengths()->isVisibleTo(&window));
    window.lengths()->evaluateAll();
    LengthChart* chart = window.lengths()->chart();
    QTRY_COMPARE_WITH_TIMEOUT(chart->series(LengthChart::Loss).size(), 2, 30000);
    QCOMPARE(chart->series(LengthChart::Accuracy).size(), 2);
    for (int i = 0; i < 2; ++i) {
      auto* pane = qobject_cast<LengthView*>(window.pane(i)->viewInstance().widget);
      QVERIFY(pane);
      QCOMPARE(chart->lines()[i].curve.points.size(), pane->sweep()->curve(i).points.size());
      QCOMPARE(chart->series(LengthChart::Loss)[i]->pen().color(), pane->chart()->series(LengthChart::Loss).front()->pen().color());
    }
    QVERIFY(chart->series(LengthChart::Loss)[0]->pen().color() != chart->series(LengthChart::Loss)[1]->pen().color());
    if (const QByteArray file = qgetenv("ATTNLAB_SCREENSHOT"); !file.isEmpty()) {  // the comparison's chart, for the eye
      window.resize(1600, 1000);
      window.show();
      QTest::qWait(500);
      QVERIFY(window.grab().save(QString(file)));
    }
    window.setViewKind(viewKindIndex(QStringLiteral("attention")));
    QVERIFY(!window.lengths()->isVisibleTo(&window));
  }
};

QTEST_MAIN(LengthChartTest)
#include "test_length_chart.moc"
