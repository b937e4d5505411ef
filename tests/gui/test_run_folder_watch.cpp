// File > Watch Run Folder in the real window: a run folder that a trainer writes into (as the PyTorch
// export's train.py does: RUN/history.csv and RUN/checkpoint/, swapped atomically) opens its
// checkpoint at once and again each time a newer one lands, with its history in the training view
// and its trace in the attention view; a folder that is not a run is refused in one line.
#include <QApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "attention_map_model.h"
#include "experiment_files.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "main_window.h"
#include "run_folder_watcher.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {

ExperimentConfig tinyConfig() {
  ExperimentConfig config;
  if (!loadPreset("default", config).empty()) qFatal("default preset");
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64", "model.context=24",
                        "train.batch=4", "train.eval_every=3", "train.steps=1000", "name=watched"})
    if (!applyOverride(config, o).empty()) qFatal("%s", o);
  return config;
}

int stepsShown(const MainWindow& window) {
  const auto& points = window.lossHistory().points();
  return points.empty() ? 0 : points.back().step;
}

// Trains `trainer` by `steps` and writes RUN/checkpoint/ as train.py does.
void trainAndCheckpoint(Trainer& trainer, int steps, const QString& run) {
  for (int i = 0; i < steps; ++i) trainer.trainStep();
  QFile history(run + "/history.csv");  // the live log, appended as training goes
  QVERIFY(history.open(QIODevice::Append));
  QCOMPARE(saveCheckpoint((run + "/checkpoint").toStdString(), trainer), std::string());
}

}  // namespace

class RunFolderWatchTest : public QObject {
  Q_OBJECT
 private slots:
  void followsNewCheckpoints() {
    QTemporaryDir dir;
    const QString run = dir.filePath("run");
    QVERIFY(QDir().mkpath(run));
    Trainer trainer(tinyConfig());
    trainAndCheckpoint(trainer, 3, run);

    MainWindow window(tinyConfig(), "default");
    window.show();
    QCOMPARE(window.runWatcher().watch(run), QString());
    QVERIFY(window.runWatcher().watching());
    QVERIFY(QTest::qWaitFor([&] { return stepsShown(window) == 3 && window.attentionMap().step() == 3; }, 30000));
    QCOMPARE(window.files().currentFolder(), QDir::cleanPath(run + "/checkpoint"));
    QCOMPARE(QString::fromStdString(window.config().name), QString("watched"));

    QTest::qWait(1100);  // file times of the next checkpoint differ even on coarse clocks
    trainAndCheckpoint(trainer, 4, run);
    QVERIFY(QTest::qWaitFor([&] { return stepsShown(window) == 7 && window.attentionMap().step() == 7; }, 30000));
    QCOMPARE(window.lossHistory().points().size(), size_t(7));

    window.runWatcher().stop();
    QVERIFY(!window.runWatcher().watching());
  }

  void refusesAFolderThatIsNotARun() {
    QTemporaryDir dir;
    MainWindow window(tinyConfig(), "default");
    const QString why = window.runWatcher().watch(dir.path());
    QVERIFY2(why.contains("is not a run folder") && !why.contains('\n'), qPrintable(why));
    QVERIFY(!window.runWatcher().watching());
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
  QApplication::setApplicationName(QStringLiteral("test_run_folder_watch"));
  RunFolderWatchTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_run_folder_watch.moc"
