// Opening a Hugging Face folder in the real window: the load runs on a worker, every view's
// attention model then has the folder's layers and heads, the probe is the default sentence through
// the folder's tokenizer (BOS first, labels with ␣), probe edits are traced, Train asks before
// fine-tuning (or closing) the opened model, and a refused folder leaves the current experiment on display.
#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QTabBar>
#include <QMessageBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "../tiny_hf_folder.h"
#include "attention_map_model.h"
#include "hf/hf_vocabulary.h"
#include "io/config_json.h"
#include "main_window.h"
#include "model_fine_tuner.h"
#include "model_opener.h"
#include "open_model_dialog.h"
#include "training_session.h"

using namespace attnlab;
using State = TrainingSession::State;

class OpenHfModelTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  static ExperimentConfig tinyConfig() {
    ExperimentConfig config;
    if (!loadPreset("default", config).empty()) qFatal("default preset");
    for (const char* o : {"model.d_model=32", "model.n_layers=1", "model.n_heads=2", "model.d_ff=64", "model.context=24", "train.steps=3"})
      if (!applyOverride(config, o).empty()) qFatal("%s", o);
    return config;
  }

  static bool opened(MainWindow& w, int layers) {
    return QTest::qWaitFor([&] { return w.session().hasOpenedModel() && w.attentionMap().layerCount() == layers; }, 60000);
  }

 private slots:
  void opensIntoEveryView() {
    const std::string dir = tmp_.path().toStdString() + "/gpt2";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir, 3, 4, 16)), QString());
    MainWindow w(tinyConfig(), QStringLiteral("default"));
    w.show();
    w.openModelFolder(QString::fromStdString(dir));
    QVERIFY(opened(w, 3));
    QCOMPARE(w.session().state(), State::Finished);
    const AttentionMapModel& map = w.attentionMap();
    for (int l = 0; l < 3; ++l) QCOMPARE(map.headCount(l), 4);

    // The probe: ModelOpener::kProbeText through tokenizer.json, BOS first as tokenizer_config.json asks.
    std::vector<int> expected;
    std::string problem;
    const Vocabulary vocabulary = hf::hfVocabulary(dir, tiny_hf::kVocab, problem);
    QCOMPARE(QString::fromStdString(problem), QString());
    QCOMPARE(QString::fromStdString(hf::encodeForModel(vocabulary, ModelOpener::kProbeText, tiny_hf::kVocab, expected)), QString());
    QCOMPARE(expected.front(), tiny_hf::kBos);
    expected.resize(std::min<size_t>(expected.size(), 64));  // the folder's context
    QCOMPARE(map.snapshot()->trace.tokens, expected);
    QCOMPARE(map.tokenLabel(0), QStringLiteral("<|endoftext|>"));
    QCOMPARE(map.tokenLabel(1), QStringLiteral("T"));
    QCOMPARE(map.tokenLabel(4), QStringLiteral("\u2423"));  // the space before "quick": this tokenizer has no "Ġq"
    QCOMPARE(map.snapshot()->model->run->config.model.n_heads, 4);
    QVERIFY(!w.session().hasExperiment());  // nothing to save as a lab experiment

    // A probe edit is traced by the opened model's worker.
    const std::vector<int> edit = {tiny_hf::kBos, 'a', 257, 257};
    w.session().setProbe(edit);
    QVERIFY(QTest::qWaitFor([&] { return map.snapshot() && map.snapshot()->trace.tokens == edit; }, 30000));

    // Every view tab can be shown without trouble on the opened model.
    for (int v = 0; v < w.tabs()->count(); ++v) {
      w.showView(v);
      QApplication::processEvents();
      w.settleView(v);
    }

    // Train asks first (model_fine_tuner.h, test_fine_tune_opened_model): Cancel keeps the opened
    // model, "the panel's experiment instead" trains that.
    bool panelInstead = false;
    w.modelFineTuner().setAsk([&](bool, bool& trainPanel) {
      trainPanel = panelInstead;
      return std::optional<FineTuneChoice>();
    });
    QAction* train = w.findChild<QAction*>(QStringLiteral("trainAction"));
    QVERIFY(train);
    train->trigger();
    QVERIFY(w.session().hasOpenedModel());
    panelInstead = true;
    train->trigger();
    QVERIFY(!w.session().hasOpenedModel());
    QVERIFY(QTest::qWaitFor([&] { return w.attentionMap().layerCount() == 1; }, 60000));
  }

  void refusalKeepsTheExperiment() {
    const std::string dir = tmp_.path().toStdString() + "/foreign";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir)), QString());
    std::ofstream(dir + "/config.json") << R"({"model_type": "bert", "vocab_size": 10})";
    MainWindow w(tinyConfig(), QStringLiteral("default"));
    w.show();
    w.session().setPauseAtStep(1);
    w.startTraining();
    QVERIFY(QTest::qWaitFor([&] { return w.session().state() == State::Paused && w.attentionMap().step() == 1; }, 60000));
    w.openModelFolder(QString::fromStdString(dir));
    QMessageBox* box = nullptr;
    QVERIFY(QTest::qWaitFor([&] { return (box = w.findChild<QMessageBox*>(QStringLiteral("openModelRefusal"))) != nullptr; }, 30000));
    QVERIFY2(box->informativeText().contains(QStringLiteral("bert")), qPrintable(box->informativeText()));
    box->close();
    QVERIFY(!w.session().hasOpenedModel());
    QCOMPARE(w.session().state(), State::Paused);
    QCOMPARE(w.attentionMap().step(), 1);
    QCOMPARE(w.attentionMap().layerCount(), 1);
  }

  void dialogListsTheCache() {
    const std::filesystem::path root = tmp_.path().toStdString() + "/hub";
    const std::filesystem::path snapshot = root / "models--org--tiny-gpt2" / "snapshots" / "abc123";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(snapshot)), QString());
    std::filesystem::create_directories(root / "models--org--tiny-gpt2" / "refs");
    std::ofstream(root / "models--org--tiny-gpt2" / "refs" / "main") << "abc123";
    OpenModelDialog dialog(QString::fromStdString(root.string()));
    QCOMPARE(dialog.table()->rowCount(), 1);
    QCOMPARE(dialog.table()->item(0, 0)->text(), QStringLiteral("org/tiny-gpt2"));
    QCOMPARE(dialog.table()->item(0, 1)->text(), QStringLiteral("gpt2"));
    dialog.table()->setCurrentCell(0, 0);
    QCOMPARE(std::filesystem::path(dialog.chosenFolder().toStdString()), snapshot);
  }
};

QTEST_MAIN(OpenHfModelTest)
#include "test_open_hf_model.moc"
