// The forward-pass explainer shows the trace's own computation: its output equals the weighted
// sum of the traced values, its scores are q·k/√d plus the positional bias (0 without one, ALiBi's
// −m·distance with it), softmax recomputed from the scores gives the traced weights, the mask
// is the causal one; Next and Back step through the stages; it follows the selection and query.
#include <QApplication>
#include <QPushButton>
#include <QtTest>
#include <cmath>

#include "attention_map_model.h"
#include "forward_pass_view.h"
#include "head_selection.h"
#include "tiny_experiment.h"
#include "training_session.h"

using namespace attnlab;

namespace {

std::shared_ptr<const TraceSnapshot> trainedTrace(const char* positional, const std::vector<std::string>& more = {}) {
  ExperimentConfig config = testing::tinyConfig(5);
  if (!applyOverride(config, std::string("model.positional=") + positional).empty()) qFatal("positional");
  for (const std::string& assignment : more)
    if (const std::string why = applyOverride(config, assignment); !why.empty()) qFatal("%s", why.c_str());
  TrainingSession session;
  std::shared_ptr<const TraceSnapshot> last;
  QObject::connect(&session, &TrainingSession::traced, [&](const auto& trace) { last = trace; });
  session.start(config);
  if (!QTest::qWaitFor([&] { return last && last->step == 5 && session.state() == TrainingSession::State::Finished; }, 60000))
    qFatal("training");
  return last;
}

}  // namespace

class ForwardPassTest : public QObject {
  Q_OBJECT
 private slots:
  void showsTheTracesComputation() {
    const auto trace = trainedTrace("none");
    AttentionMapModel map;
    HeadSelection selection(&map);
    map.setTrace(trace);
    selection.select(1, 1);
    ForwardPassView view(ViewContext{&map, &selection});
    QVERIFY(view.hasPass());
    const int T = selection.shown().size();
    QCOMPARE(view.query(), T - 1);  // the probe's last token by default
    const HeadTrace& h = trace->trace.layers[1].heads[1];
    for (int query : {T - 1, 3, 0}) {
      view.setQuery(query);
      QCOMPARE(view.query(), query);
      const ForwardPass& f = view.pass();
      QCOMPARE(int(f.keys.size()), query + 1);  // causal
      for (int j = 0; j < T; ++j) QCOMPARE(bool(f.visible[j]), j <= query);
      // The output drawn is sum_j a_ij v_j of the trace, computed here independently.
      const std::vector<double> shown = view.shownOutput();
      QCOMPARE(int(shown.size()), int(h.v.cols()));
      for (int c = 0; c < int(h.v.cols()); ++c) {
        double expected = 0;
        for (int j = 0; j < T; ++j) expected += double(h.weights(query, j)) * h.v(j, c);
        QVERIFY2(std::fabs(shown[c] - expected) < 1e-5, qPrintable(QStringLiteral("dim %1: %2 vs %3").arg(c).arg(shown[c]).arg(expected)));
      }
      for (size_t j = 0; j < f.keys.size(); ++j) {
        QCOMPARE(f.score[j], double(h.scores(query, f.keys[j])));
        QCOMPARE(f.weight[j], double(h.weights(query, f.keys[j])));
        QVERIFY(std::fabs(f.bias[j]) < 1e-4);                    // NoPE: the score is q·k/√d and nothing else
        QVERIFY(std::fabs(f.recomputed[j] - f.weight[j]) < 1e-5);  // softmax of the scores is the engine's weight
      }
      QVERIFY(std::fabs(f.weightSum - 1) < 1e-5);
    }
    QVERIFY(QString::fromStdString(explainWeight(view.pass(), 0)).startsWith(QStringLiteral("a(1, 1) = exp(score")));
    QVERIFY(QString::fromStdString(explainOutput(view.pass(), 0)).contains(QStringLiteral("\u03a3_j a_j v_j")));

    // It follows the selection.
    selection.select(0, 0);
    const HeadTrace& h00 = trace->trace.layers[0].heads[0];
    QCOMPARE(view.pass().score[0], double(h00.scores(view.query(), 0)));
  }

  void showsAlibisBias() {
    const auto trace = trainedTrace("alibi");
    AttentionMapModel map;
    HeadSelection selection(&map);
    map.setTrace(trace);
    selection.select(0, 0);
    ForwardPassView view(ViewContext{&map, &selection});
    const ForwardPass& f = view.pass();
    const double slope = std::pow(2.0, -8.0 / 2);  // m_h = 2^(-8h/H), head 1 of 2
    for (size_t j = 0; j < f.keys.size(); ++j) {
      const double expected = -slope * (f.query - f.keys[j]);
      QVERIFY2(std::fabs(f.bias[j] - expected) < 1e-4, qPrintable(QStringLiteral("key %1: %2 vs %3").arg(j).arg(f.bias[j]).arg(expected)));
    }
  }

  // The linear kernel, presence coupling and a sliding window: each variant's own normalisation,
  // recomputed from the traced scores (and presence), gives the engine's weights.
  void explainsEachNormalisation_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("normalisation");
    QTest::newRow("linear") << "linear" << "linear";
    QTest::newRow("oattention") << "oattention" << "presence";
    QTest::newRow("window") << "window" << "softmax";
  }
  void explainsEachNormalisation() {
    QFETCH(QString, variant);
    QFETCH(QString, normalisation);
    std::vector<std::string> sets = {"model.attention=" + variant.toStdString()};
    if (variant == "window") sets.push_back("model.attention_settings.window=3");
    const auto trace = trainedTrace("none", sets);
    AttentionMapModel map;
    HeadSelection selection(&map);
    map.setTrace(trace);
    selection.select(1, 0);
    ForwardPassView view(ViewContext{&map, &selection});
    const HeadTrace& h = trace->trace.layers[1].heads[0];
    const int T = selection.shown().size();
    view.setQuery(T - 1);
    const ForwardPass& f = view.pass();
    QCOMPARE(QString::fromStdString(f.normalisation), normalisation);
    QCOMPARE(f.recomputed.size(), f.keys.size());
    for (size_t j = 0; j < f.keys.size(); ++j)
      QVERIFY2(std::fabs(f.recomputed[j] - f.weight[j]) < 1e-5, qPrintable(QStringLiteral("key %1: %2 vs %3").arg(j).arg(f.recomputed[j]).arg(f.weight[j])));
    const double receiver = variant == "oattention" ? double(h.presence.at(T - 1)) : 1.0;
    QCOMPARE(f.queryPresence, receiver);
    for (int c = 0; c < int(h.v.cols()); ++c) {  // the output: p_i (1 without presence) times sum_j a_ij v_j
      double expected = 0;
      for (int j = 0; j < T; ++j) expected += double(h.weights(T - 1, j)) * h.v(j, c);
      QVERIFY(std::fabs(view.shownOutput()[c] - receiver * expected) < 1e-5);
    }
    if (variant == "window") QCOMPARE(int(f.keys.size()), 3);
    if (variant == "linear") {
      QVERIFY(QString::fromStdString(explainScore(f, 0)).contains(QStringLiteral("\u03c6(q)\u00b7\u03c6(k)")));
      for (double b : f.bias) QCOMPARE(b, 0.0);
    }
    if (variant == "oattention") QVERIFY(QString::fromStdString(explainOutput(f, 0)).startsWith(QStringLiteral("p_q")));
  }

  void stepsThroughTheStages() {
    const auto trace = trainedTrace("none");
    AttentionMapModel map;
    HeadSelection selection(&map);
    map.setTrace(trace);
    ForwardPassView view(ViewContext{&map, &selection});
    view.show();
    view.setStage(0);
    QList<QPushButton*> buttons = view.findChildren<QPushButton*>();
    QPushButton* next = nullptr;
    for (QPushButton* b : buttons)
      if (b->text().startsWith(QStringLiteral("Next"))) next = b;
    QVERIFY(next && next->isEnabled());
    for (int s = 1; s < ForwardPassView::StageCount; ++s) {
      next->click();
      QCOMPARE(view.stage(), s);
    }
    QVERIFY(!next->isEnabled());
  }

  void emptyWithoutARun() {
    AttentionMapModel map;
    HeadSelection selection(&map);
    ForwardPassView view(ViewContext{&map, &selection});
    QVERIFY(!view.hasPass());
    QVERIFY(!view.hasExportData());
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ForwardPassTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_forward_pass.moc"
