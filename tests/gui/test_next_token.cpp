// The Next token view on an opened model and on a lab model: the distribution shown is
// softmax(logits / T) of the engine's own logits for the probe, cut to top-k then top-p and
// renormalised (recomputed here independently); greedy and sampled generation append the same
// tokens as `attnlab-cli generate` with the same settings; Cancel stops a generation.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "../tiny_hf_folder.h"
#include "attention_map_model.h"
#include "hf/hf_model.h"
#include "main_window.h"
#include "model/workspace.h"
#include "next_token_model.h"
#include "next_token_view.h"
#include "tiny_experiment.h"
#include "training_session.h"

using namespace attnlab;

namespace {

// The reference: the engine's logits for `tokens` through a plain forward pass, then the cut done here.
std::vector<double> logitsAfter(const Model& model, const std::vector<int>& tokens) {
  auto ws = makeWorkspace();
  const std::vector<int> none(tokens.size(), -1);
  model.forward(*ws, tokens.data(), none.data(), 1, static_cast<int>(tokens.size()));
  const Mat& z = workspaceLogits(*ws);
  std::vector<double> row(z.cols());
  for (int v = 0; v < z.cols(); ++v) row[v] = z(z.rows() - 1, v);
  return row;
}

std::vector<std::pair<int, double>> expectedCut(const std::vector<double>& z, double T, int k, double p) {
  const double peak = *std::max_element(z.begin(), z.end());
  std::vector<std::pair<int, double>> probs;
  double sum = 0;
  for (size_t v = 0; v < z.size(); ++v) sum += std::exp((z[v] - peak) / T);
  for (size_t v = 0; v < z.size(); ++v) probs.push_back({static_cast<int>(v), std::exp((z[v] - peak) / T) / sum});
  std::stable_sort(probs.begin(), probs.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (k > 0 && k < static_cast<int>(probs.size())) probs.resize(k);
  double kept = 0;
  for (auto& q : probs) kept += q.second;
  for (auto& q : probs) q.second /= kept;
  if (p < 1) {
    double running = 0;
    size_t n = 0;
    while (n < probs.size() && running < p) running += probs[n++].second;
    probs.resize(n);
    double mass = 0;
    for (auto& q : probs) mass += q.second;
    for (auto& q : probs) q.second /= mass;
  }
  return probs;
}

std::vector<int> cliGenerate(const QString& dir, const std::vector<int>& prompt, int count, const QStringList& extra) {
  QStringList ids;
  for (int t : prompt) ids << QString::number(t);
  QProcess cli;
  cli.start(QStringLiteral(ATTNLAB_CLI), QStringList{"generate", "--model", dir, "--ids", ids.join(','), "--tokens", QString::number(count), "--json"} + extra);
  if (!cli.waitForFinished(60000) || cli.exitCode() != 0) qFatal("attnlab-cli generate failed: %s", cli.readAllStandardError().constData());
  const QJsonObject out = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
  std::vector<int> tokens = prompt;
  for (const QJsonValue& v : out.value("tokens").toArray()) tokens.push_back(v.toInt());
  return tokens;
}

}  // namespace

class NextTokenTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  static void set(NextTokenView& view, double T, int k, double p) {
    view.temperature()->setValue(T);
    view.topK()->setValue(k);
    view.topP()->setValue(p);
    view.settle();
  }

  static void checkShown(NextTokenView& view, const Model& model, const std::vector<int>& probe, double T, int k, double p) {
    set(view, T, k, p);
    const auto shown = view.model()->prediction();
    QVERIFY(shown);
    QCOMPARE(shown->position, static_cast<int>(probe.size()) - 1);
    const auto expected = expectedCut(logitsAfter(model, probe), T, k, p);
    QCOMPARE(shown->distribution.kept.size(), expected.size());
    double total = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      QCOMPARE(shown->distribution.kept[i].token, expected[i].first);
      QVERIFY2(std::abs(shown->distribution.kept[i].probability - expected[i].second) < 1e-5,
               qPrintable(QStringLiteral("T %1 k %2 p %3 row %4: %5 vs %6").arg(T).arg(k).arg(p).arg(i)
                              .arg(shown->distribution.kept[i].probability).arg(expected[i].second)));
      total += shown->distribution.kept[i].probability;
    }
    QVERIFY(std::abs(total - 1) < 1e-9);
    // The table shows the first rows of that list, most likely first.
    QCOMPARE(view.table()->rowCount(), std::min<int>(expected.size(), NextTokenView::kShownRows));
    QCOMPARE(view.table()->item(0, 2)->text(), QString::number(expected[0].first));
  }

  // Generates with the view's controls and waits until the trace shows the grown probe.
  static std::vector<int> generate(MainWindow& w, NextTokenView& view, int count) {
    const size_t before = w.attentionMap().snapshot()->trace.tokens.size();
    view.tokens()->setValue(count);
    view.generateButton()->click();
    view.settle();
    const std::vector<int> grown = view.model()->generatedSequence();
    if (grown.size() != before + count) qFatal("generated %d of %d", int(grown.size() - before), count);
    if (!QTest::qWaitFor([&] { return w.attentionMap().snapshot()->trace.tokens == grown; }, 30000)) qFatal("the probe did not follow");
    return grown;
  }

 private slots:
  void openedModel_data() {
    QTest::addColumn<QString>("architecture");
    QTest::newRow("gpt2") << QStringLiteral("gpt2");
    QTest::newRow("llama") << QStringLiteral("llama");
  }

  void openedModel() {
    QFETCH(QString, architecture);
    const std::string dir = tmp_.path().toStdString() + "/" + architecture.toStdString();
    const std::string why = architecture == "gpt2" ? tiny_hf::writeGpt2Folder(dir, 2, 2, 16) : tiny_hf::writeLlamaFolder(dir);
    QCOMPARE(QString::fromStdString(why), QString());
    std::unique_ptr<Model> reference;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel(dir, reference, info)), QString());

    MainWindow w(testing::tinyConfig(3), QStringLiteral("default"));
    w.show();
    w.openModelFolder(QString::fromStdString(dir));
    QVERIFY(QTest::qWaitFor([&] { return w.session().hasOpenedModel() && w.attentionMap().snapshot(); }, 60000));
    w.showView(QStringLiteral("predictions"));
    auto* view = w.view<NextTokenView>();
    QVERIFY(view);
    std::vector<int> probe = w.attentionMap().snapshot()->trace.tokens;
    probe.resize(10);  // room in the context (64) for what is generated below
    w.session().setProbe(probe);
    QVERIFY(QTest::qWaitFor([&] { return w.attentionMap().snapshot()->trace.tokens == probe; }, 30000));
    checkShown(*view, *reference, probe, 1.0, 0, 1.0);
    checkShown(*view, *reference, probe, 0.7, 5, 1.0);
    checkShown(*view, *reference, probe, 1.5, 0, 0.5);
    checkShown(*view, *reference, probe, 1.0, 12, 0.3);
    QVERIFY2(view->summary().contains(QStringLiteral("of %1 tokens").arg(tiny_hf::kVocab)), qPrintable(view->summary()));
    QVERIFY(!view->summary().contains(QStringLiteral("step")));

    // Greedy: the most likely token each time, as the command line's argmax decoding.
    set(*view, 1.0, 0, 1.0);
    view->decoding()->setCurrentIndex(0);
    const std::vector<int> greedy = generate(w, *view, 6);
    QCOMPARE(greedy, cliGenerate(QString::fromStdString(dir), probe, 6, {"--temperature", "0"}));
    // The distribution now follows the grown probe.
    checkShown(*view, *reference, greedy, 1.0, 0, 1.0);

    // Sampling with a cut: the same tokens as the command line with the same settings and seed.
    set(*view, 0.8, 20, 0.9);
    view->decoding()->setCurrentIndex(1);
    view->seed()->setValue(3);
    const std::vector<int> start = w.attentionMap().snapshot()->trace.tokens;
    const std::vector<int> sampled = generate(w, *view, 9);
    QCOMPARE(sampled, cliGenerate(QString::fromStdString(dir), start, 9, {"--temperature", "0.8", "--top-k", "20", "--top-p", "0.9", "--seed", "3"}));

    // Cancel: stops between chunks; what was appended stays, and the buttons are back.
    view->tokens()->setValue(40);
    view->generateButton()->click();
    QVERIFY(view->model()->generating());
    QVERIFY(!view->generateButton()->isEnabled());
    view->cancelButton()->click();
    QVERIFY(!view->model()->generating());
    QVERIFY(view->generateButton()->isEnabled());
    QVERIFY(view->model()->generated() < 40);
    QVERIFY(view->model()->message().contains(QStringLiteral("cancelled")));
  }

  void labModel() {
    MainWindow w(testing::tinyConfig(4), QStringLiteral("default"));
    w.show();
    w.startTraining();
    QVERIFY(QTest::qWaitFor([&] { return w.session().state() == TrainingSession::State::Finished && w.attentionMap().step() == 4; }, 60000));
    w.showView(QStringLiteral("predictions"));
    auto* view = w.view<NextTokenView>();
    QVERIFY(view);
    const TraceSnapshot* shown = w.attentionMap().snapshot();
    const std::shared_ptr<const Model> kept = shown->model->model;  // the snapshot goes with the next probe
    const Model& model = *kept;
    std::vector<int> probe = shown->trace.tokens;
    probe.resize(probe.size() / 2);  // room in the context for new tokens
    w.session().setProbe(probe);
    QVERIFY(QTest::qWaitFor([&] { return w.attentionMap().snapshot()->trace.tokens == probe; }, 30000));
    checkShown(*view, model, probe, 1.0, 0, 1.0);
    checkShown(*view, model, probe, 0.5, 3, 0.8);
    QVERIFY(view->summary().size() > 0);

    // Greedy generation is argmax decoding, one full forward each.
    view->decoding()->setCurrentIndex(0);
    const std::vector<int> grown = generate(w, *view, 3);
    std::vector<int> expected = probe;
    for (int i = 0; i < 3; ++i) {
      const std::vector<double> z = logitsAfter(model, expected);
      expected.push_back(static_cast<int>(std::max_element(z.begin(), z.end()) - z.begin()));
    }
    QCOMPARE(grown, expected);

    // At the context: stops there and says so.
    const int context = model.config().context;
    view->tokens()->setValue(context);
    view->generateButton()->click();
    view->settle();
    QCOMPARE(static_cast<int>(view->model()->generatedSequence().size()), context);
    QVERIFY2(view->model()->message().contains(QStringLiteral("context")), qPrintable(view->model()->message()));
  }
};

QTEST_MAIN(NextTokenTest)
#include "test_next_token.moc"
