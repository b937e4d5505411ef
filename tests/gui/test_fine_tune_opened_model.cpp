// Train and Save on a Hugging Face model opened in the real window (model_fine_tuner.h): Train
// fine-tunes it on the probe text, read with the folder's tokenizer, and every view follows the
// training; File > Save writes a lab checkpoint that opens with the fine-tuned weights; Save on a
// freshly opened model writes it untrained; a text that is too short is refused and the opened
// model stays.
#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QLineEdit>
#include <QLineEdit>
#include <QMessageBox>
#include <QRadioButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "../hf_support.h"
#include "../tiny_hf_folder.h"
#include "attention_map_model.h"
#include "experiment_files.h"
#include "fine_tune_dialog.h"
#include "hf/hf_model.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "main_window.h"
#include "model_fine_tuner.h"
#include "training_session.h"

using namespace attnlab;
using State = TrainingSession::State;

class FineTuneOpenedModelTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString folder_;

  static ExperimentConfig tinyConfig() {
    ExperimentConfig config;
    if (!loadPreset("default", config).empty()) qFatal("default preset");
    for (const char* o : {"model.d_model=32", "model.n_layers=1", "model.n_heads=2", "model.d_ff=64", "model.context=24", "train.steps=3"})
      if (!applyOverride(config, o).empty()) qFatal("%s", o);
    return config;
  }

  void open(MainWindow& w) {
    w.openModelFolder(folder_);
    QVERIFY(QTest::qWaitFor([&] { return w.session().hasOpenedModel() && w.attentionMap().layerCount() == 2; }, 60000));
  }

  static std::vector<float> outputHead(const Model& model) {
    const Mat& e = model.params().find("tok_emb.weight")->value;
    return std::vector<float>(e.data(), e.data() + e.size());
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // the probe text goes to a test data folder
    folder_ = tmp_.path() + "/gpt2";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(folder_.toStdString())), QString());
  }

  void trainFineTunesOnTheProbeTextAndSaveWritesIt() {
    MainWindow w(tinyConfig(), QStringLiteral("default"));
    w.show();
    open(w);
    const std::vector<int> probe = w.attentionMap().snapshot()->trace.tokens;
    w.modelFineTuner().setAsk([](bool saving, bool&) {
      return saving ? std::nullopt : std::optional<FineTuneChoice>(FineTuneChoice{true, {}, 4});
    });
    w.findChild<QAction*>(QStringLiteral("trainAction"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return w.session().state() == State::Finished && w.session().hasExperiment(); }, 120000));
    QVERIFY(!w.session().hasOpenedModel());
    QCOMPARE(w.attentionMap().step(), 4);  // the views follow the fine-tuning
    QVERIFY(QTest::qWaitFor([&] { return w.attentionMap().snapshot()->trace.tokens == probe; }, 30000));  // the user's probe stays

    const QString saved = tmp_.path() + "/tuned";
    w.files().saveTo(saved);
    QVERIFY(QTest::qWaitFor([&] { return QFile::exists(saved + "/model.safetensors"); }, 30000));
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(saved.toStdString(), loaded)), QString());
    QCOMPARE(loaded.trainer->stepsDone(), 4);
    QCOMPARE(QString::fromStdString(loaded.config.task.tokenizer), saved + "/pretrained");  // its copy of the folder's description
    QVERIFY(QFile::exists(saved + "/pretrained/config.json"));
    // The probe text (through the folder's tokenizer) is what it trained on.
    QVERIFY(loaded.trainer->task().vocabulary().tokenizer() != nullptr);
    std::unique_ptr<Model> original;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel(folder_.toStdString(), original, info)), QString());
    QVERIFY(outputHead(loaded.trainer->model()) != outputHead(*original));  // trained
  }

  void saveOnAnOpenedModelWritesItAsItIs() {
    MainWindow w(tinyConfig(), QStringLiteral("default"));
    w.show();
    open(w);
    w.modelFineTuner().setAsk([](bool saving, bool&) {
      return saving ? std::optional<FineTuneChoice>(FineTuneChoice{true, {}, 0}) : std::nullopt;
    });
    const QString saved = tmp_.path() + "/as_is";
    // Save leads to the folder question once the checkpoint's trainer is built: answer it.
    QTimer poll;
    connect(&poll, &QTimer::timeout, [&] {
      for (QWidget* top : QApplication::topLevelWidgets())
        if (auto* dialog = qobject_cast<QFileDialog*>(top); dialog && dialog->isVisible()) {
          // selectFile leaves the name field alone while it has the focus, as it has once the
          // window is active: type the name into the field, as a user would.
          dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"))->setText(saved);
          static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept, through the public QDialog slot
        }
    });
    poll.start(100);
    QAction* save = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == QStringLiteral("&Save Experiment")) save = a;
    QVERIFY(save && save->isEnabled());
    save->trigger();
    QVERIFY(QTest::qWaitFor([&] { return QFile::exists(saved + "/model.safetensors"); }, 60000));
    LoadedCheckpoint loaded;
    QVERIFY(QTest::qWaitFor([&] { return loadCheckpoint(saved.toStdString(), loaded).empty(); }, 10000));
    QCOMPARE(loaded.trainer->stepsDone(), 0);
    std::unique_ptr<Model> original;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel(folder_.toStdString(), original, info)), QString());
    QVERIFY(outputHead(loaded.trainer->model()) == outputHead(*original));
  }

  void aTextTooShortIsRefusedAndTheModelStays() {
    MainWindow w(tinyConfig(), QStringLiteral("default"));
    w.show();
    open(w);
    const QString shortText = tmp_.path() + "/short.txt";
    attnlab::testing::writeTextFile(shortText.toStdString(), "too short");
    w.modelFineTuner().setAsk([&](bool, bool&) { return std::optional<FineTuneChoice>(FineTuneChoice{false, shortText, 5}); });
    w.findChild<QAction*>(QStringLiteral("trainAction"))->trigger();
    QMessageBox* box = nullptr;
    QVERIFY(QTest::qWaitFor([&] { return (box = w.findChild<QMessageBox*>(QStringLiteral("fineTuneRefusal"))) != nullptr; }, 60000));
    QVERIFY2(box->informativeText().contains(QStringLiteral("too short")), qPrintable(box->informativeText()));
    box->close();
    QVERIFY(QTest::qWaitFor([&] { return w.session().hasOpenedModel(); }, 10000));
    QCOMPARE(w.session().state(), State::Finished);
  }

  // The dialog itself: the probe by default, a file once one is typed, OK only for a real file.
  void dialogChoosesTheText() {
    FineTuneDialog dialog(QStringLiteral("gpt2"), false, 100);
    QVERIFY(dialog.probeButton()->isChecked());
    QCOMPARE(dialog.choice().steps, 100);
    dialog.fileField()->setText(tmp_.path() + "/missing.txt");
    QVERIFY(dialog.fileButton()->isChecked());
    QVERIFY(!dialog.findChild<QWidget*>(QStringLiteral("fineTuneOk"))->isEnabled());
    attnlab::testing::writeTextFile((tmp_.path() + "/real.txt").toStdString(), attnlab::testing::fineTuneText());
    dialog.fileField()->setText(tmp_.path() + "/real.txt");
    QVERIFY(dialog.findChild<QWidget*>(QStringLiteral("fineTuneOk"))->isEnabled());
    dialog.stepsField()->setValue(7);
    QCOMPARE(dialog.choice().textFile, tmp_.path() + "/real.txt");
    QCOMPARE(dialog.choice().steps, 7);
    QVERIFY(!dialog.choice().useProbe);
  }
};

QTEST_MAIN(FineTuneOpenedModelTest)
#include "test_fine_tune_opened_model.moc"
