// The Circuits tab on a small random model: the pair check, a head patching sweep into the heatmap
// (one cell per layer and head), the lens table and DLA chart, the composition graph (edges by the
// threshold control, a click on a node selecting its head), a click on the map selecting the head
// in the shared selection, the CSV export, and Cancel dropping a sweep's result. Retrieval heads on
// a lab run's validation sample and on an opened Hugging Face folder (passkey prompts in its tokenizer).
#include <QtTest>

#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>

#include "../model_support.h"
#include "attention_map_model.h"
#include "circuits_model.h"
#include "circuits_tab.h"
#include "composition_graph.h"
#include "head_selection.h"
#include "patching_map.h"
#include "hf/hf_model.h"
#include "hf/hf_vocabulary.h"
#include "../tiny_hf_folder.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {

std::shared_ptr<TraceSnapshot> snapshotOf(std::shared_ptr<const Model> model, std::shared_ptr<const Vocabulary> vocabulary) {
  auto modelSnapshot = std::make_shared<ModelSnapshot>();
  modelSnapshot->model = model;
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->vocabulary = vocabulary;
  snapshot->maxProbeLength = model->config().context;
  snapshot->trace = traceModel(*model, *vocabulary, {0, 1, 2, 3, 0, 1});
  snapshot->model = modelSnapshot;
  return snapshot;
}

// The retrieval pane's status line once the study (or its refusal) is in.
QString retrievalOutcome(CircuitsTab& tab, int k) {
  if (QString why = tab.runRetrieval(k); !why.isEmpty()) return why;
  tab.model()->job().waitForIdle();
  QCoreApplication::processEvents();
  QStringList texts;
  for (const QLabel* label : tab.findChildren<QLabel*>())
    if (label->text().contains("accuracy") || label->text().startsWith("Retrieval")) texts << label->text();
  return texts.join(" | ");
}

}  // namespace

class TestCircuitsView : public QObject {
  Q_OBJECT

 private slots:
  // A refused 5,000-character token is quoted back shortened, for the clean and the corrupted prompt.
  void aRefusedLongTokenIsShortened() {
    std::shared_ptr<const Model> model = testing::randomisedModel(testing::smallConfig("softmax", "rope", 6));
    auto vocabulary = std::make_shared<const Vocabulary>(std::vector<std::string>{"a", "b", "c", "d", "e", "f"}, Vocabulary::Level::Word);
    AttentionMapModel attention;
    attention.setTrace(snapshotOf(model, vocabulary));
    HeadSelection selection(&attention);
    CircuitsTab tab(ViewContext{&attention, &selection});
    const QString token(5000, QLatin1Char('q'));
    const QString clean = tab.runPair("a b " + token, "a b c", "head_out");
    QVERIFY2(clean.startsWith("Clean:") && clean.size() < 200 && clean.contains(QChar(0x2026)), qPrintable(clean.left(300)));
    const QString corrupt = tab.runPair("a b c", "a " + token + " c", "head_out");
    QVERIFY2(corrupt.startsWith("Corrupted:") && corrupt.size() < 200 && corrupt.contains(QChar(0x2026)), qPrintable(corrupt.left(300)));
  }

  void patchesAndSelects() {
    std::shared_ptr<const Model> model = testing::randomisedModel(testing::smallConfig("softmax", "rope", 6));
    auto vocabulary = std::make_shared<const Vocabulary>(std::vector<std::string>{"a", "b", "c", "d", "e", "f"}, Vocabulary::Level::Word);
    AttentionMapModel attention;
    attention.setTrace(snapshotOf(model, vocabulary));
    HeadSelection selection(&attention);
    CircuitsTab tab(ViewContext{&attention, &selection});
    tab.resize(1200, 800);
    tab.show();
    QVERIFY(!tab.runPair("a b c d", "a b e", "head_out").isEmpty());  // lengths differ
    QVERIFY(tab.runPair("a b c d a b", "a b e d a b", "head_out", "c", "e").isEmpty());
    tab.model()->job().waitForIdle();
    QCoreApplication::processEvents();
    QStringList labels;
    for (const QLabel* label : tab.findChildren<QLabel*>()) labels << label->text();
    QVERIFY2(tab.model()->result() != nullptr, qPrintable(labels.join(" | ")));
    const PatchingMap* map = tab.findChild<PatchingMap*>();
    QCOMPARE(map->effects().size(), size_t(2 * 4));
    QCOMPARE(tab.findChild<QTableWidget*>()->rowCount(), 3);  // residuals entering 2 blocks and the final one
    QVERIFY(tab.findChild<QChartView*>()->chart()->series().size() == 1);

    // Layer 1, head 2: row 1 of 2, column 2 of 4 of the grid right of the 64-pixel label margin.
    const QRectF grid(64, 8, map->width() - 72, map->height() - 56);
    const QPoint cell(static_cast<int>(grid.left() + grid.width() * 2.5 / 4), static_cast<int>(grid.top() + grid.height() * 1.5 / 2));
    QTest::mouseClick(const_cast<PatchingMap*>(map), Qt::LeftButton, {}, cell);
    QCOMPARE(selection.layer(), 1);
    QCOMPARE(selection.head(), 2);

    // The composition graph: 2 x 4 heads, 16 pairs; the threshold (first set to the strongest
    // tenth) chooses the edges; the kind picks the score; a click on a node selects its head.
    CompositionGraph* graph = tab.findChild<CompositionGraph*>();
    QVERIFY(graph->hasData());
    const HeadComposition& hc = *tab.model()->result()->composition;
    QCOMPARE(hc.pairs.size(), size_t(16));
    QCOMPARE(graph->shownEdges().size(), size_t(2));  // ceil(0.1 x 16)
    QDoubleSpinBox* threshold = tab.findChild<QDoubleSpinBox*>();
    threshold->setValue(0);
    QCOMPARE(graph->shownEdges().size(), size_t(16));
    threshold->setValue(0.999);
    QVERIFY(graph->shownEdges().empty());
    double median = 0;
    std::vector<double> vs;
    for (const CompositionScore& s : hc.pairs) vs.push_back(s.v);
    std::sort(vs.begin(), vs.end());
    median = vs[8];
    for (QComboBox* box : tab.findChildren<QComboBox*>())
      if (box->findText("V-composition") >= 0) box->setCurrentText("V-composition");
    threshold->setValue(median);
    QCOMPARE(graph->shownEdges().size(), size_t(std::count_if(vs.begin(), vs.end(), [&](double v) { return v >= threshold->value(); })));
    QTest::mouseClick(graph, Qt::LeftButton, {}, graph->nodeCentre(0, 3).toPoint());
    QCOMPARE(selection.layer(), 0);
    QCOMPARE(selection.head(), 3);

    QString csv;
    QTextStream out(&csv);
    tab.writeCsv(out);
    QCOMPARE(csv.count("\ncomposition_k,"), 16);
    QCOMPARE(csv.count("\nov_copying,"), 8);
    QCOMPARE(csv.count("\npatch,"), 8);

    // A cancelled sweep delivers nothing: the shown result stays.
    const CircuitsResult* before = tab.model()->result();
    QVERIFY(tab.runPair("a b c d a b", "a b e d a b", "resid", "c", "e").isEmpty());
    tab.model()->cancel();
    tab.model()->job().waitForIdle();
    QCoreApplication::processEvents();
    QCOMPARE(tab.model()->result(), before);
  }

  // A lab run: the task's validation sample (targets mark the answers); refused when it marks none.
  void retrievalOnALabRun() {
    std::shared_ptr<const Model> model = testing::randomisedModel(testing::smallConfig("softmax", "rope", 6));
    auto vocabulary = std::make_shared<const Vocabulary>(std::vector<std::string>{"a", "b", "c", "d", "e", "f"}, Vocabulary::Level::Word);
    auto run = std::make_shared<RunData>();
    run->vocabulary = vocabulary;
    run->evalBatches = {Batch{2, 6, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, {-1, -1, -1, 1, 2, -1, -1, -1, -1, 4, 5, -1}}};
    auto snapshot = snapshotOf(model, vocabulary);
    std::const_pointer_cast<ModelSnapshot>(snapshot->model)->run = run;
    AttentionMapModel attention;
    attention.setTrace(snapshot);
    HeadSelection selection(&attention);
    CircuitsTab tab(ViewContext{&attention, &selection});
    QVERIFY(retrievalOutcome(tab, 1).contains("marks no answers"));
    run->hasAnswers = true;
    const QString status = retrievalOutcome(tab, 1);
    QVERIFY2(status.contains("On 2 validation sequences of the task"), qPrintable(status));
    const QTableWidget* table = tab.findChild<QTableWidget*>("retrievalScores");
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->columnCount(), 4);
    QCOMPARE(tab.model()->retrieval()->study.top.size(), size_t(1));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualItemRect(table->item(1, 3)).center());
    QCOMPARE(selection.layer(), 1);
    QCOMPARE(selection.head(), 3);
  }

  // An opened model: passkey prompts written with the folder's tokenizer; k = 0 changes nothing.
  void retrievalOnAnOpenedModel() {
    QTemporaryDir tmp;
    const std::string dir = tmp.filePath("gpt2").toStdString();
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir, 2, 2, 8, 128)), QString());
    std::unique_ptr<Model> opened;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel(dir, opened, info)), QString());
    std::string problem;
    auto vocabulary = std::make_shared<const Vocabulary>(hf::hfVocabulary(dir, info.config.vocab, problem));
    std::shared_ptr<const Model> model = std::move(opened);
    auto run = std::make_shared<RunData>();
    run->vocabulary = vocabulary;
    run->openedName = "gpt2";
    auto modelSnapshot = std::make_shared<ModelSnapshot>();
    modelSnapshot->model = model;
    modelSnapshot->run = run;
    auto snapshot = std::make_shared<TraceSnapshot>();
    snapshot->vocabulary = vocabulary;
    snapshot->maxProbeLength = model->config().context;
    snapshot->trace = traceModel(*model, *vocabulary, {tiny_hf::kBos, 97, 98, 257});
    snapshot->model = modelSnapshot;
    AttentionMapModel attention;
    attention.setTrace(snapshot);
    HeadSelection selection(&attention);
    CircuitsTab tab(ViewContext{&attention, &selection});
    // The probe fills the clean prompt as text that encodes back to it (not the ␣ display forms).
    for (const QLineEdit* edit : tab.findChildren<QLineEdit*>())
      if (edit->placeholderText().startsWith("clean")) {
        std::vector<int> ids;
        std::string why;
        QVERIFY(vocabulary->encode(edit->text().toStdString(), ids, why));
        QCOMPARE(ids, snapshot->trace.tokens);
      }
    // The swap helper changes one token and the corrupted text encodes back to as many tokens.
    for (int at = 1; at < static_cast<int>(snapshot->trace.tokens.size()); ++at) {
      tab.findChild<QSpinBox*>("swapPosition")->setValue(at);
      for (QPushButton* button : tab.findChildren<QPushButton*>())
        if (button->text().startsWith("Corrupt")) button->click();
      for (const QLineEdit* edit : tab.findChildren<QLineEdit*>())
        if (edit->placeholderText().startsWith("corrupted")) {
          std::vector<int> ids;
          std::string why;
          QVERIFY(vocabulary->encode(edit->text().toStdString(), ids, why));
          QCOMPARE(ids.size(), snapshot->trace.tokens.size());
          int changed = 0;
          for (size_t i = 0; i < ids.size(); ++i) changed += ids[i] != snapshot->trace.tokens[i];
          QCOMPARE(changed, 1);
          QVERIFY(ids[at] != snapshot->trace.tokens[at]);
        }
    }
    QString status = retrievalOutcome(tab, 2);
    QVERIFY2(status.contains("On 4 passkey prompts of 128 tokens"), qPrintable(status));
    QCOMPARE(tab.findChild<QTableWidget*>("retrievalScores")->rowCount(), 2);
    QString csv;
    QTextStream out(&csv);
    tab.writeCsv(out);
    QCOMPARE(csv.count("\nretrieval,"), 4);
    QVERIFY(!std::isnan(tab.model()->retrieval()->study.accuracy));
    status = retrievalOutcome(tab, 0);
    const RetrievalStudy& none = tab.model()->retrieval()->study;
    QCOMPARE(none.accuracy_top_masked, none.accuracy);
    QCOMPARE(none.accuracy_random_masked, none.accuracy);
    QVERIFY(tab.runRetrieval(5).contains("has 4 heads"));
  }
};

QTEST_MAIN(TestCircuitsView)
#include "test_circuits_view.moc"
