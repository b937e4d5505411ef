// A comparison holds a watched run beside a lab-trained one: run 2 follows a run folder that a
// trainer elsewhere writes into (as the PyTorch export's train.py does: RUN/history.csv and
// RUN/checkpoint/, swapped atomically), opening each new checkpoint as it lands, while run 1
// trains in the lab; Train all leaves the watched run alone, the metrics table evaluates both,
// and a folder that is not a run is refused in one line. With ATTNLAB_SCREENSHOT=FILE the window
// is saved there once both runs are on display.
#include <QTemporaryDir>
#include <QtTest>

#include "attention_map_model.h"
#include "comparison_metrics_model.h"
#include "comparison_pane.h"
#include "comparison_window.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "train/trainer.h"

using namespace attnlab;
using State = TrainingSession::State;

namespace {

ExperimentConfig tiny(const char* attention, const char* name, int steps) {
  ExperimentConfig c;
  if (!loadPreset("default", c).empty()) qFatal("default preset");
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64", "model.context=24",
                        "train.batch=4", "train.eval_every=3", "train.threads=1"})
    if (!applyOverride(c, o).empty()) qFatal("override %s", o);
  c.model.attention = {attention};
  c.name = name;
  c.train.steps = steps;
  return c;
}

// Trains `trainer` by `steps` and writes RUN/checkpoint/ as train.py does.
void trainAndCheckpoint(Trainer& trainer, int steps, const QString& run) {
  for (int i = 0; i < steps; ++i) trainer.trainStep();
  QCOMPARE(saveCheckpoint((run + "/checkpoint").toStdString(), trainer), std::string());
  QFile history(run + "/history.csv");  // train.py's live log beside the checkpoint
  QVERIFY(history.open(QIODevice::Append));
}

int lastStep(const ComparisonPane& pane) {
  const auto& points = pane.history()->points();
  return points.empty() ? 0 : points.back().step;
}

}  // namespace

class ComparisonWatchTest : public QObject {
  Q_OBJECT
 private slots:
  void holdsAWatchedRunBesideALabRun() {
    QTemporaryDir dir;
    const QString run = dir.filePath("run");
    QVERIFY(QDir().mkpath(run));
    Trainer elsewhere(tiny("sigmoid", "trained elsewhere", 1000));
    trainAndCheckpoint(elsewhere, 3, run);

    ComparisonWindow window({tiny("softmax", "trained in the lab", 12), tiny("softmax", "placeholder", 12)});
    window.show();
    QCOMPARE(window.watchRunFolder(1, run), QString());
    ComparisonPane& watched = *window.pane(1);
    QVERIFY(watched.watching());
    QCOMPARE(watched.watchedFolder(), QDir::cleanPath(run + "/checkpoint"));
    QVERIFY(QTest::qWaitFor([&] { return lastStep(watched) == 3 && watched.tracedStep() == 3; }, 30000));
    QCOMPARE(QString::fromStdString(watched.config().name), QString("trained elsewhere"));  // the run's own experiment
    QCOMPARE(watched.config().model.attention, std::vector<std::string>{"sigmoid"});
    QVERIFY2(watched.headerText().contains("Watching"), qPrintable(watched.headerText()));
    QVERIFY(!window.hasUnsavedSteps());  // a watched run's steps are the folder's, not unsaved work
    const QString column = window.metrics()->headerData(1, Qt::Horizontal).toString();  // titled by the run's own experiment
    QVERIFY2(column.contains("sigmoid"), qPrintable(column));

    window.trainAll();  // trains run 1 only
    ComparisonPane& lab = *window.pane(0);
    QVERIFY(QTest::qWaitFor([&] { return lab.session()->state() == State::Finished; }, 60000));
    QCOMPARE(lastStep(lab), 12);
    QCOMPARE(lastStep(watched), 3);  // not trained here
    QVERIFY(watched.session()->state() != State::Running);
    QVERIFY(QTest::qWaitFor([&] { return !window.metrics()->busy(); }, 30000));
    QVERIFY(std::isfinite(window.metrics()->value(0, 0)) && std::isfinite(window.metrics()->value(0, 1)));

    QTest::qWait(1100);  // file times of the next checkpoint differ even on coarse clocks
    trainAndCheckpoint(elsewhere, 4, run);
    QVERIFY(QTest::qWaitFor([&] { return lastStep(watched) == 7 && watched.tracedStep() == 7; }, 30000));
    QCOMPARE(watched.history()->points().size(), size_t(7));
    QCOMPARE(lastStep(lab), 12);  // the lab run is untouched by the watched one
    QVERIFY(QTest::qWaitFor([&] { return !window.metrics()->busy(); }, 30000));

    if (const QByteArray file = qgetenv("ATTNLAB_SCREENSHOT"); !file.isEmpty()) QVERIFY(window.grab().save(QString(file)));

    window.resetAll();  // ends the watch too
    QVERIFY(!watched.watching());
  }

  void refusesAFolderThatIsNotARun() {
    QTemporaryDir dir;
    ComparisonWindow window({tiny("softmax", "a", 5), tiny("sigmoid", "b", 5)});
    const QString why = window.watchRunFolder(0, dir.path());
    QVERIFY2(why.contains("is not a run folder") && !why.contains('\n'), qPrintable(why));
    QVERIFY(!window.pane(0)->watching());
    QVERIFY(window.watchRunFolder(4, dir.path()).contains("no run 5"));
  }
};

QTEST_MAIN(ComparisonWatchTest)
#include "test_comparison_watch.moc"
