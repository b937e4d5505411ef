// Saving and opening experiments in the real window: a save/open round trip restores identical
// weights (same logits, same re-saved bytes) and history; a corrupt or foreign folder gives a
// message and leaves the current experiment as it was; unsaved trained steps are asked about;
// autosave, the recent list, window layout and the last experiment persist (in an isolated
// QSettings folder, never the user's).
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "attention_map_model.h"
#include "experiment_files.h"
#include "experiment_panel.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "main_window.h"
#include "training_session.h"

using namespace attnlab;
using State = TrainingSession::State;

namespace {

// The default preset made small, so a few steps take well under a second.
ExperimentConfig tinyConfig() {
  ExperimentConfig config;
  if (!loadPreset("default", config).empty()) qFatal("default preset");
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64", "model.context=24",
                        "train.batch=4", "train.eval_every=3", "train.steps=1000"})
    if (!applyOverride(config, o).empty()) qFatal("%s", o);
  return config;
}

int stepsShown(const MainWindow& window) {
  const auto& points = window.lossHistory().points();
  return points.empty() ? 0 : points.back().step;
}

// Trains `window` to `steps` steps and waits there, paused, with that step's map on display.
bool trainAndPause(MainWindow& window, int steps) {
  window.session().setPauseAtStep(steps);
  window.startTraining();
  return QTest::qWaitFor([&] {
    return window.session().state() == State::Paused && stepsShown(window) == steps && window.attentionMap().step() == steps;
  }, 60000);
}

QByteArray fileBytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool sameLogits(const TraceSnapshot* a, const TraceSnapshot* b) {
  return a && b && a->trace.logits.rows() > 0 && a->trace.logits == b->trace.logits;
}

QList<QMessageBox*> openMessages(const QWidget& window) {
  QList<QMessageBox*> boxes;
  for (QMessageBox* box : window.findChildren<QMessageBox*>())
    if (box->isVisible()) boxes << box;
  return boxes;
}

void closeMessages(const QWidget& window) {
  for (QMessageBox* box : openMessages(window)) box->close();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

}  // namespace

class ExperimentFilesTest : public QObject {
  Q_OBJECT
 private slots:
  void saveAndOpenRestoreWeightsAndHistory() {
    QTemporaryDir dir;
    const QString folder = dir.filePath("run");
    MainWindow first(tinyConfig(), "default");
    first.show();
    QVERIFY(trainAndPause(first, 7));
    QVERIFY(first.files().hasUnsavedSteps());
    QSignalSpy saved(&first.session(), &TrainingSession::saved);
    QSignalSpy pausedAgain(&first.session(), &TrainingSession::pausedAt);
    first.files().saveTo(folder);  // the paused worker saves, and stays paused without a word
    QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
    QTest::qWait(200);
    QCOMPARE(pausedAgain.count(), 0);
    QCOMPARE(first.session().state(), State::Paused);
    QCOMPARE(stepsShown(first), 7);
    QCOMPARE(saved.first().at(2).toString(), QString());
    QCOMPARE(saved.first().at(1).toInt(), 7);
    QVERIFY(!first.files().hasUnsavedSteps());
    QCOMPARE(first.files().currentFolder(), QDir::cleanPath(folder));
    QVERIFY(first.files().recentFolders().contains(QDir::cleanPath(folder)));
    QVERIFY(!first.isWindowModified());

    MainWindow second(ExperimentConfig{}, "default");
    second.show();
    QCOMPARE(second.files().open(folder), QString());
    QCOMPARE(second.session().state(), State::Paused);
    QTRY_VERIFY_WITH_TIMEOUT(second.attentionMap().step() == 7, 30000);
    // Same weights: the probe's logits are bit for bit those of the window that saved them.
    QVERIFY(sameLogits(first.attentionMap().snapshot(), second.attentionMap().snapshot()));
    // Same history, every value.
    const auto& a = first.lossHistory().points();
    const auto& b = second.lossHistory().points();
    QCOMPARE(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(b[i].step, a[i].step);
      QCOMPARE(b[i].loss, a[i].loss);
      QVERIFY(b[i].val_loss == a[i].val_loss || (std::isnan(b[i].val_loss) && std::isnan(a[i].val_loss)));
    }
    // Same experiment in the panel and the window.
    QCOMPARE(QString::fromStdString(configToJson(second.config())), QString::fromStdString(configToJson(second.experimentPanel().appliedConfig())));
    QCOMPARE(second.config().model.d_model, 32);
    QVERIFY(!second.files().hasUnsavedSteps());

    // Saved again from the opened window: byte-identical weights and history.
    const QString again = dir.filePath("again");
    QCOMPARE(second.files().saveAndStop(again), QString());
    for (const char* name : {"model.safetensors", "history.csv"})
      QCOMPARE(fileBytes(QDir(again).filePath(name)), fileBytes(QDir(folder).filePath(name)));

    // An opened experiment trains on from where it was saved.
    MainWindow third(ExperimentConfig{}, "default");
    QCOMPARE(third.files().open(folder), QString());
    third.session().resume();
    QTRY_VERIFY_WITH_TIMEOUT(stepsShown(third) > 8, 60000);
    QCOMPARE(third.lossHistory().points()[6].loss, a[6].loss);
    QVERIFY(third.files().hasUnsavedSteps());
    third.session().reset();
  }

  void aCorruptOrForeignFolderLeavesTheExperimentIntact() {
    QTemporaryDir dir;
    const QString good = dir.filePath("good");
    MainWindow window(tinyConfig(), "default");
    window.show();
    QVERIFY(trainAndPause(window, 4));
    QCOMPARE(window.files().saveAndStop(good), QString());  // now Stopped at step 4, saved
    const QString configBefore = QString::fromStdString(configToJson(window.config()));
    const auto logitsBefore = window.attentionMap().snapshot()->trace.logits;

    // A truncated weights file, a config that is not JSON, one claiming more than memory holds, a
    // folder that is not a checkpoint, nothing at all.
    QDir root(dir.path());
    QVERIFY(root.mkdir("truncated"));
    QVERIFY(QFile::copy(good + "/config.json", dir.filePath("truncated/config.json")));
    QVERIFY(QFile::copy(good + "/history.csv", dir.filePath("truncated/history.csv")));
    {
      QFile weights(dir.filePath("truncated/model.safetensors"));
      QVERIFY(weights.open(QIODevice::WriteOnly));
      weights.write(fileBytes(good + "/model.safetensors").left(100));
    }
    QVERIFY(root.mkdir("garbled"));
    QVERIFY(QFile::copy(good + "/model.safetensors", dir.filePath("garbled/model.safetensors")));
    {
      QFile config(dir.filePath("garbled/config.json"));
      QVERIFY(config.open(QIODevice::WriteOnly));
      config.write("{\"model\": {\"d_model\": ");
    }
    QVERIFY(root.mkdir("huge"));  // claims a vocabulary of two billion: terabytes to open
    QVERIFY(QFile::copy(good + "/model.safetensors", dir.filePath("huge/model.safetensors")));
    {
      ExperimentConfig huge = window.config();
      huge.model.vocab = 2'000'000'000;
      QFile config(dir.filePath("huge/config.json"));
      QVERIFY(config.open(QIODevice::WriteOnly));
      config.write(configToJson(huge).c_str());
    }
    QVERIFY(root.mkdir("foreign"));
    {
      QFile other(dir.filePath("foreign/notes.txt"));
      QVERIFY(other.open(QIODevice::WriteOnly));
      other.write("not an experiment");
    }

    const struct {
      QString folder;
      const char* reason;
    } cases[] = {{dir.filePath("truncated"), "model.safetensors"},
                 {dir.filePath("garbled"), "not valid JSON"},
                 {dir.filePath("huge"), "opening this checkpoint needs about"},
                 {dir.filePath("foreign"), "not an attnlab checkpoint"},
                 {dir.filePath("absent"), "no such checkpoint folder"}};
    for (const auto& c : cases) {
      const QString why = window.files().open(c.folder);
      QVERIFY2(why.contains(c.reason), qPrintable(c.folder + ": " + why));
      QVERIFY2(!why.contains('\n'), qPrintable(why));
      const QList<QMessageBox*> boxes = openMessages(window);
      QCOMPARE(boxes.size(), 1);
      QVERIFY2(boxes.first()->text().contains(why) && boxes.first()->text().contains("unchanged"), qPrintable(boxes.first()->text()));
      closeMessages(window);
      // Everything as it was.
      QCOMPARE(QString::fromStdString(configToJson(window.config())), configBefore);
      QCOMPARE(stepsShown(window), 4);
      QCOMPARE(window.attentionMap().snapshot()->trace.logits, logitsBefore);
      QCOMPARE(window.files().currentFolder(), QDir::cleanPath(good));
      QVERIFY(window.session().hasExperiment());
    }
    QVERIFY(!window.files().recentFolders().contains(QDir::cleanPath(dir.filePath("truncated"))));

    // The experiment can still be saved: it really is intact.
    const QString after = dir.filePath("after");
    QCOMPARE(window.files().saveAndStop(after), QString());
    QCOMPARE(fileBytes(after + "/model.safetensors"), fileBytes(good + "/model.safetensors"));
  }

  void unsavedStepsAreAskedAbout() {
    QTemporaryDir dir;
    MainWindow window(tinyConfig(), "default");
    window.show();
    QVERIFY(trainAndPause(window, 3));
    QVERIFY(window.files().hasUnsavedSteps());
    QVERIFY(window.isWindowModified());
    QStringList questions;
    QMessageBox::StandardButton answer = QMessageBox::Cancel;
    window.files().setPrompt([&](const QString& question) {
      questions << question;
      return answer;
    });

    // Cancel: the window stays, the steps stay.
    QVERIFY(!window.close());
    QCOMPARE(questions.size(), 1);
    QVERIFY2(questions.first().contains("3 trained steps"), qPrintable(questions.first()));
    QVERIFY(window.isVisible());
    ExperimentConfig other = tinyConfig();
    other.model.n_heads = 4;
    QVERIFY(!window.applyExperiment(other));
    QCOMPARE(window.config().model.n_heads, 2);
    QCOMPARE(stepsShown(window), 3);

    // Saved at step 3, trained on to step 5, then Save: the folder gets step 5, then the new settings apply.
    const QString folder = dir.filePath("kept");
    QSignalSpy saved(&window.session(), &TrainingSession::saved);
    window.files().saveTo(folder);
    QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
    QVERIFY(!window.files().hasUnsavedSteps());
    window.session().setPauseAtStep(5);
    window.session().resume();
    QTRY_VERIFY_WITH_TIMEOUT(window.session().state() == State::Paused && stepsShown(window) == 5, 60000);
    QVERIFY(window.files().hasUnsavedSteps());
    answer = QMessageBox::Save;
    QVERIFY(window.applyExperiment(other));
    QCOMPARE(window.config().model.n_heads, 4);
    QVERIFY(!window.files().hasUnsavedSteps());
    LoadedCheckpoint kept;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder.toStdString(), kept)), QString());
    QCOMPARE(kept.trainer->stepsDone(), 5);
    QCOMPARE(window.files().currentFolder(), QString());  // the new experiment has no folder yet

    // Discard: applied without saving; nothing to ask once nothing is trained.
    QVERIFY(trainAndPause(window, 2));
    answer = QMessageBox::Discard;
    const int asked = questions.size();
    QVERIFY(window.applyPreset("induction"));
    QCOMPARE(questions.size(), asked + 1);
    QCOMPARE(window.config().name, std::string("Induction heads"));
    QVERIFY(window.applyPreset("default"));
    QCOMPARE(questions.size(), asked + 1);
    QVERIFY(window.close());
  }

  void stepTakesOneStepAtATime() {
    MainWindow window(tinyConfig(), "default");
    window.show();
    auto action = [&](const char* name) { return window.findChild<QAction*>(name); };
    QVERIFY(action("trainAction") && action("pauseAction") && action("stepAction") && action("resetAction"));
    QCOMPARE(action("stepAction")->shortcut(), QKeySequence(Qt::Key_F10));
    QVERIFY(!action("pauseAction")->isEnabled());

    action("stepAction")->trigger();  // from nothing: builds the model, takes step 1, pauses
    QTRY_VERIFY_WITH_TIMEOUT(window.session().state() == State::Paused && stepsShown(window) == 1, 60000);
    QTRY_COMPARE_WITH_TIMEOUT(window.attentionMap().step(), 1, 10000);
    for (int step = 2; step <= 4; ++step) {
      action("stepAction")->trigger();
      QTRY_COMPARE_WITH_TIMEOUT(stepsShown(window), step, 30000);
      QTRY_COMPARE_WITH_TIMEOUT(window.attentionMap().step(), step, 10000);  // its map, at once
      QCOMPARE(window.session().state(), State::Paused);
    }
    QTest::qWait(300);
    QCOMPARE(stepsShown(window), 4);  // and no further

    action("trainAction")->trigger();  // resumes
    QCOMPARE(window.session().state(), State::Running);
    QVERIFY(action("pauseAction")->isEnabled() && !action("stepAction")->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(stepsShown(window) > 4, 30000);
    action("pauseAction")->trigger();
    QCOMPARE(window.session().state(), State::Paused);
    window.files().setPrompt([](const QString&) { return QMessageBox::Discard; });
    action("resetAction")->trigger();
    QCOMPARE(window.session().state(), State::Idle);
    QCOMPARE(window.lossHistory().rowCount(), 0);
  }

  void autosaveWritesALoadableCheckpointWhileTraining() {
    QTemporaryDir dir;
    MainWindow window(tinyConfig(), "default");
    ExperimentFiles::Autosave settings;
    settings.folder = dir.filePath("autosave");
    window.files().setAutosave(settings);
    QCOMPARE(QSettings().value("autosave/folder").toString(), settings.folder);
    QSignalSpy saved(&window.session(), &TrainingSession::saved);
    window.startTraining();
    QTRY_VERIFY_WITH_TIMEOUT(stepsShown(window) >= 3, 60000);
    window.files().autosaveNow();
    QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 30000);
    QCOMPARE(saved.first().at(2).toString(), QString());
    const QString folder = window.files().autosaveFolderFor(QString::fromStdString(window.config().name));
    QCOMPARE(saved.first().at(0).toString(), folder);
    QVERIFY(folder.startsWith(settings.folder));
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder.toStdString(), loaded)), QString());
    QVERIFY(loaded.trainer->stepsDone() >= 3);
    // An autosave is not a save: the steps still count as unsaved, and the folder is not the document's.
    QVERIFY(window.files().hasUnsavedSteps());
    QCOMPARE(window.files().currentFolder(), QString());
    window.session().reset();
  }

  void layoutAndLastExperimentPersist() {
    ExperimentConfig induction;
    QVERIFY(loadPreset("induction", induction).empty());
    {
      MainWindow window(tinyConfig(), "default");
      window.restoreLayout();
      window.show();
      window.resize(1234, 777);
      QVERIFY(window.applyExperiment(induction));
      window.attentionMap().setColourScale(AttentionMapModel::ColourScale::Log);
      QVERIFY(window.close());
    }
    MainWindow again(tinyConfig(), "default");
    again.restoreLayout();
    QVERIFY(again.restoreLastExperiment());
    QCOMPARE(again.config().name, std::string("Induction heads"));
    QCOMPARE(again.experimentPanel().appliedConfig().name, std::string("Induction heads"));
    QCOMPARE(again.size(), QSize(1234, 777));
    QCOMPARE(again.attentionMap().colourScale(), AttentionMapModel::ColourScale::Log);
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  // Settings and standard paths of this test only: the user's own are never read or written.
  QTemporaryDir settings;
  QStandardPaths::setTestModeEnabled(true);
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("attnlab-test"));
  QApplication::setApplicationName(QStringLiteral("test_experiment_files"));
  ExperimentFilesTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_experiment_files.moc"
