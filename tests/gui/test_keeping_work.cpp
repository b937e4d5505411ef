// Keeping the user's work across starts of the real window, each start a new MainWindow on the
// same settings, in fresh settings and data folders (XDG_CONFIG_HOME, XDG_DATA_HOME in a temporary
// folder, as on a new machine):
// - after a kill that followed an autosave, the next start offers "Recover unsaved experiment
//   from <time>?"; accepting restores the autosaved weights, history and settings as unsaved work,
//   declining reopens the last saved folder as it was;
// - a normal restart reopens the folder last saved, with its weights, or says in the status bar
//   that it did not and why;
// - Train on a finished run asks: Continue N more steps (at the rate the run ended with), or Start
//   over (through the unsaved-work question, whose Cancel keeps the run and Discard trains anew
//   from step 0), or Cancel;
// - a run stopped halfway, saved, opened with File > Open and continued with Train ends exactly as
//   the run trained straight through: the same weights, optimiser state and history;
// - a folder moved to a new machine reopens with its weights, history, probe, selection and view
//   settings (colour scale, view, KV-cache policy and budget); an older folder whose text file
//   moved opens through "Locate file..." and keeps a copy of the text when saved.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include <QComboBox>
#include <QLineEdit>

#include "attention_map_model.h"
#include "experiment_files.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "train/trainer.h"
#include "head_selection.h"
#include "kv_cache_view.h"
#include "view_kind.h"
#include "last_state.h"
#include "loss_history_model.h"
#include "main_window.h"
#include "tiny_experiment.h"
#include "training_session.h"

using namespace attnlab;
using State = TrainingSession::State;

namespace {

int stepsShown(const MainWindow& window) {
  const auto& points = window.lossHistory().points();
  return points.empty() ? 0 : points.back().step;
}

QByteArray fileBytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A start of the app: the window with the settings persisting, as attnlab without options starts.
std::unique_ptr<MainWindow> startApp(LastState::RecoverPrompt prompt = {}) {
  auto window = std::make_unique<MainWindow>(testing::tinyConfig(1000), "default");
  window->restoreLayout();
  window->lastState()->setRecoverPrompt(prompt ? prompt : [](const QString& q) -> bool {
    qFatal("unexpected question: %s", qPrintable(q));
  });
  window->files().setPrompt([](const QString&) { return QMessageBox::Discard; });
  window->restoreLastExperiment();
  window->show();
  return window;
}

bool pauseAt(MainWindow& window, int steps) {
  window.session().setPauseAtStep(steps);
  if (window.session().state() == State::Paused) window.session().resume();
  else window.startTraining();
  return QTest::qWaitFor([&] { return window.session().state() == State::Paused && stepsShown(window) == steps; }, 60000);
}

// Saves into `dir` (or autosaves when empty) and waits for it. Returns the folder written.
QString saveAndWait(MainWindow& window, const QString& dir = {}) {
  QSignalSpy saved(&window.files(), &ExperimentFiles::savedTo);
  if (dir.isEmpty()) window.files().autosaveNow();
  else window.files().saveTo(dir);
  if (!saved.wait(60000)) qFatal("no save");
  return saved.first().at(0).toString();
}

// The experiment on display, written out, to compare with a folder.
QByteArray weightsShown(MainWindow& window, const QString& scratch) {
  if (const QString why = window.files().saveAndStop(scratch); !why.isEmpty()) qFatal("%s", qPrintable(why));
  return fileBytes(scratch + "/model.safetensors");
}

// history.csv without its timing columns (tokens_per_second, seconds: the 7th and 8th), which
// differ between any two runs.
QStringList historyWithoutTimings(const QString& dir) {
  QStringList rows;
  for (const QString& line : QString::fromUtf8(fileBytes(dir + "/history.csv")).split('\n', Qt::SkipEmptyParts)) {
    QStringList cells = line.split(',');
    cells.remove(6, 2);
    rows << cells.join(',');
  }
  return rows;
}

}  // namespace

class KeepingWorkTest : public QObject {
  Q_OBJECT
  QTemporaryDir folders_;
  QString folder(const QString& name) const { return folders_.filePath(name); }

 private slots:
  void init() { QSettings().clear(); }

  void recoverAfterKillAccepted() {
    QString autosave;
    QByteArray autosavedWeights, autosavedHistory;
    {
      auto first = startApp();
      QVERIFY(pauseAt(*first, 6));
      autosave = saveAndWait(*first);
      autosavedWeights = fileBytes(autosave + "/model.safetensors");
      autosavedHistory = fileBytes(autosave + "/history.csv");
      QVERIFY(!autosavedWeights.isEmpty());
    }  // killed: the window goes without closing

    QString asked;
    auto second = startApp([&](const QString& question) {
      asked = question;
      return true;
    });
    QVERIFY2(asked.startsWith("Recover unsaved experiment from "), qPrintable(asked));
    QCOMPARE(stepsShown(*second), 6);
    QVERIFY(second->files().hasUnsavedSteps());  // recovered work is not saved work
    QVERIFY2(second->statusBar()->currentMessage().startsWith("Recovered the experiment autosaved at step 6"),
             qPrintable(second->statusBar()->currentMessage()));
    const QString copy = folder("recovered");
    QCOMPARE(weightsShown(*second, copy), autosavedWeights);
    QCOMPARE(fileBytes(copy + "/history.csv"), autosavedHistory);
    QCOMPARE(fileBytes(copy + "/config.json"), fileBytes(autosave + "/config.json"));
    QVERIFY(second->close());
    auto third = startApp();  // closed normally: no question, the save just made is reopened
    QCOMPARE(stepsShown(*third), 6);
  }

  void recoverDeclinedKeepsTheLastSave() {
    const QString saved = folder("declined-saved");
    {
      auto first = startApp();
      QVERIFY(pauseAt(*first, 4));
      saveAndWait(*first, saved);
      QVERIFY(pauseAt(*first, 7));
      saveAndWait(*first);  // autosave of step 7, newer than the save of step 4
    }  // killed
    int questions = 0;
    auto second = startApp([&](const QString&) {
      ++questions;
      return false;
    });
    QCOMPARE(questions, 1);
    QCOMPARE(stepsShown(*second), 4);
    QCOMPARE(second->files().currentFolder(), saved);
    QVERIFY(!second->files().hasUnsavedSteps());
    QCOMPARE(weightsShown(*second, folder("declined-copy")), fileBytes(saved + "/model.safetensors"));
  }

  void restartReopensTheLastSave() {
    const QString saved = folder("reopened");
    {
      auto first = startApp();
      QVERIFY(pauseAt(*first, 5));
      saveAndWait(*first, saved);
      QVERIFY(first->close());
    }
    {
      auto second = startApp();
      QCOMPARE(stepsShown(*second), 5);
      QVERIFY2(second->statusBar()->currentMessage().contains("Reopened"), qPrintable(second->statusBar()->currentMessage()));
      QCOMPARE(weightsShown(*second, folder("reopened-copy")), fileBytes(saved + "/model.safetensors"));
      QVERIFY(second->close());
    }
    const QString last = folder("reopened-copy");  // saved last
    QVERIFY(QDir(last).removeRecursively());  // the folder is gone: the start says so, untrained
    {
      auto third = startApp();
      QCOMPARE(stepsShown(*third), 0);
      const QString message = third->statusBar()->currentMessage();
      QVERIFY2(message.startsWith("Did not reopen " + QDir::toNativeSeparators(last)) && message.contains("no such checkpoint folder"),
               qPrintable(message));
      QVERIFY(third->close());
    }
  }

  void newExperimentIsNotReopenedAsTrained() {
    {
      auto first = startApp();
      QVERIFY(pauseAt(*first, 3));
      saveAndWait(*first, folder("before-new"));
      QVERIFY(first->applyPreset("induction"));  // a new, untrained experiment
      QVERIFY(first->close());
    }
    auto second = startApp();
    QCOMPARE(stepsShown(*second), 0);
    QCOMPARE(second->config().name, std::string("Induction heads"));
    QVERIFY2(second->statusBar()->currentMessage().contains("never saved"), qPrintable(second->statusBar()->currentMessage()));
  }

  // Saved, moved, opened on a new machine (settings cleared): the weights, history, probe,
  // selection and view settings are those saved.
  void viewStateTravelsWithTheFolder() {
    const QString saved = folder("with-views"), moved = folder("moved/with-views");
    const std::vector<int> probe = {3, 1, 4, 1, 5, 9, 2, 6};
    QByteArray history;
    {
      auto first = startApp();
      QVERIFY(pauseAt(*first, 4));
      first->session().setProbe(probe);
      QTRY_VERIFY_WITH_TIMEOUT(first->attentionMap().snapshot() && first->attentionMap().snapshot()->trace.tokens == probe, 30000);
      first->selection().select(1, 1);
      first->attentionMap().setColourScale(AttentionMapModel::ColourScale::Log);
      QCOMPARE(first->view<KvCacheView>()->setEviction("window", "6"), QString());
      first->showView(QStringLiteral("kv"));
      saveAndWait(*first, saved);
      history = fileBytes(saved + "/history.csv");
      QVERIFY(first->close());
    }
    QVERIFY(QDir().mkpath(folder("moved")));
    QVERIFY(QDir().rename(saved, moved));
    QSettings().clear();  // a new machine
    auto second = startApp();
    QCOMPARE(second->files().open(moved), QString());
    QTRY_VERIFY_WITH_TIMEOUT(second->attentionMap().snapshot() && second->attentionMap().snapshot()->trace.tokens == probe, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(second->selection().layer(), 1, 10000);
    QCOMPARE(second->selection().head(), 1);
    QCOMPARE(second->attentionMap().colourScale(), AttentionMapModel::ColourScale::Log);
    QCOMPARE(second->currentView(), viewKindIndex("kv"));
    KvCacheView* kv = second->view<KvCacheView>();
    QCOMPARE(kv->findChild<QComboBox*>("kvPolicy")->currentText(), QString("window"));
    QCOMPARE(kv->findChild<QLineEdit*>("kvBudget")->text(), QString("6"));
    QCOMPARE(fileBytes(moved + "/history.csv"), history);
    const QByteArray weights = fileBytes(moved + "/model.safetensors");
    QCOMPARE(weightsShown(*second, folder("moved-copy")), weights);
  }

  // A folder of an older version names its text file by an absolute path; the file moved:
  // Open offers "Locate file...", opens with the moved file, and the next save keeps a copy.
  void locatesAMovedTextFile() {
    const QString text = folder("old text.txt"), movedText = folder("moved text.txt"), saved = folder("old-style");
    {
      QFile file(text);
      QVERIFY(file.open(QIODevice::WriteOnly));
      for (int i = 0; i < 300; ++i) file.write("a small corpus for a character model. ");
    }
    ExperimentConfig config = testing::tinyConfig(50);
    config.task.name = "text";
    config.task.text_path = text.toStdString();
    config.task.settings.clear();
    Trainer trainer(config);
    for (int i = 0; i < 3; ++i) trainer.trainStep();
    QCOMPARE(QString::fromStdString(saveCheckpoint(saved.toStdString(), trainer)), QString());
    ExperimentConfig older = trainer.config();  // as an older version wrote it: the path, no copy
    older.model.vocab = trainer.model().config().vocab;
    QCOMPARE(QString::fromStdString(writeFileAtomic((saved + "/config.json").toStdString(), configToJson(older))), QString());
    QVERIFY(QFile::remove(saved + "/corpus.txt"));
    QVERIFY(QFile::rename(text, movedText));

    auto window = startApp();
    QString asked;
    window->files().setLocateFile([&](const QString& missing) {
      asked = missing;
      return movedText;
    });
    QCOMPARE(window->files().open(saved), QString());
    QCOMPARE(asked, text);
    QCOMPARE(stepsShown(*window), 3);
    const QByteArray weights = fileBytes(saved + "/model.safetensors");
    QCOMPARE(weightsShown(*window, saved), weights);  // saved back into its folder
    QCOMPARE(fileBytes(saved + "/corpus.txt"), fileBytes(movedText));
  }

  void trainOnAFinishedRunAsks() {
    auto window = startApp();
    ExperimentConfig eight = testing::tinyConfig(8);
    QVERIFY(window->applyExperiment(eight));
    window->startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(window->session().state(), State::Finished, 60000);
    QCOMPARE(stepsShown(*window), 8);
    QAction* train = window->findChild<QAction*>("trainAction");

    int asked = 0;
    window->setFinishedRunPrompt([&](int steps) {
      ++asked;
      return FinishedRunChoice{FinishedRunChoice::Action::Cancel, steps};
    });
    train->trigger();
    QCOMPARE(asked, 1);
    QCOMPARE(window->session().state(), State::Finished);  // Cancel: nothing changes
    QCOMPARE(stepsShown(*window), 8);

    std::vector<double> ratesBefore;
    for (const LossPoint& p : window->lossHistory().points()) ratesBefore.push_back(p.lr);
    window->setFinishedRunPrompt([&](int steps) {
      ++asked;
      [&] { QCOMPARE(steps, 8); }();
      return FinishedRunChoice{FinishedRunChoice::Action::Continue, 5};
    });
    train->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window->session().state() == State::Finished && stepsShown(*window) == 13, 60000);
    QCOMPARE(window->config().train.steps, 13);
    const auto& points = window->lossHistory().points();
    QCOMPARE(int(points.size()), 13);
    const double floor = eight.train.lr * eight.train.min_lr_ratio;  // where the schedule ends
    for (int i = 8; i < 13; ++i) QCOMPARE(points[i].lr, floor);
    for (int i = 0; i < 8; ++i) QCOMPARE(points[i].lr, ratesBefore[i]);  // the steps done kept theirs
    QVERIFY(ratesBefore.back() != floor);  // (8 steps end inside the warm-up: the rate does change)

    // A finished run opened from its folder asks too; Start over goes through the unsaved question.
    const QString saved = folder("finished");
    saveAndWait(*window, saved);
    auto reopened = startApp();
    QCOMPARE(reopened->files().open(saved), QString());
    QCOMPARE(reopened->session().state(), State::Finished);
    int startOver = 0, unsavedQuestions = 0;
    reopened->setFinishedRunPrompt([&](int steps) {
      ++startOver;
      [&] { QCOMPARE(steps, 13); }();
      return FinishedRunChoice{FinishedRunChoice::Action::StartOver, 0};
    });
    reopened->files().setPrompt([&](const QString&) {
      ++unsavedQuestions;
      return QMessageBox::Cancel;
    });
    reopened->findChild<QAction*>("trainAction")->trigger();
    QCOMPARE(startOver, 1);
    QCOMPARE(unsavedQuestions, 0);  // nothing unsaved: saved just now
    QTRY_VERIFY_WITH_TIMEOUT(reopened->session().state() == State::Finished && stepsShown(*reopened) == 13, 60000);
    QVERIFY(fileBytes(saved + "/model.safetensors") != weightsShown(*reopened, folder("started-over")));  // trained anew
  }

  // Stopped halfway, saved, opened through the window's File > Open and continued with Train, a run
  // ends exactly where the same run trained straight through ends: the same weights, optimiser
  // moments and schedule position bit for bit, and the same history but for its timings.
  void anOpenedRunContinuedWithTrainIsTheStraightRun() {
    constexpr int kSteps = 40;
    const QString straight = folder("straight"), half = folder("half"), resumed = folder("resumed");
    {
      auto window = startApp();
      QVERIFY(window->applyExperiment(testing::tinyConfig(kSteps)));
      window->startTraining();
      QTRY_COMPARE_WITH_TIMEOUT(window->session().state(), State::Finished, 60000);
      QCOMPARE(stepsShown(*window), kSteps);
      saveAndWait(*window, straight);
    }
    {
      auto window = startApp();
      QVERIFY(window->applyExperiment(testing::tinyConfig(kSteps)));
      QVERIFY(pauseAt(*window, kSteps / 2));
      saveAndWait(*window, half);
    }
    QCOMPARE(fileBytes(half + "/history.csv").count('\n'), 1 + kSteps / 2);
    auto window = startApp();
    QCOMPARE(window->files().open(half), QString());
    QCOMPARE(window->session().state(), State::Paused);
    QCOMPARE(stepsShown(*window), kSteps / 2);
    // The steps Train trains: 21 to 40 (a run started over from step 0 would end the same).
    std::vector<int> trained;
    const auto watch = connect(&window->session(), &TrainingSession::lossPointsAdded, this, [&](const std::vector<LossPoint>& points) {
      for (const LossPoint& p : points) trained.push_back(p.step);
    });
    QSignalSpy cleared(&window->session(), &TrainingSession::cleared);
    window->findChild<QAction*>("trainAction")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window->session().state() == State::Finished && stepsShown(*window) == kSteps, 60000);
    disconnect(watch);
    QCOMPARE(cleared.count(), 0);
    QCOMPARE(int(trained.size()), kSteps / 2);
    QCOMPARE(trained.front(), kSteps / 2 + 1);
    saveAndWait(*window, resumed);
    for (const char* file : {"model.safetensors", "optimizer.safetensors", "training_state.json"}) {
      QVERIFY2(!fileBytes(straight + "/" + file).isEmpty(), file);
      QVERIFY2(fileBytes(resumed + "/" + file) == fileBytes(straight + "/" + file), file);
    }
    const QStringList history = historyWithoutTimings(resumed);
    QCOMPARE(history.size(), 1 + kSteps);
    QCOMPARE(history, historyWithoutTimings(straight));
  }

  // Start over on a finished run with unsaved steps asks about them first: Cancel keeps the trained
  // run as it was, Discard trains anew from step 0.
  void startOverAsksAboutUnsavedSteps() {
    auto window = startApp();
    QVERIFY(window->applyExperiment(testing::tinyConfig(8)));
    window->startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(window->session().state(), State::Finished, 60000);
    QAction* train = window->findChild<QAction*>("trainAction");
    // Five more steps at the schedule's floor: a run that training anew from step 0 cannot repeat.
    window->setFinishedRunPrompt([](int) { return FinishedRunChoice{FinishedRunChoice::Action::Continue, 5}; });
    train->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(window->session().state() == State::Finished && stepsShown(*window) == 13, 60000);
    // Copies of the run written as autosaves are, which leave its steps unsaved.
    int copies = 0;
    const auto copyRun = [&] {
      const QString dir = folder(QStringLiteral("copy-%1").arg(++copies));
      QSignalSpy saved(&window->session(), &TrainingSession::saved);
      window->session().save(dir, TrainingSession::SaveKind::Autosave);
      if (!QTest::qWaitFor([&] { return saved.count() == 1; }, 60000) || !saved.first().at(2).toString().isEmpty()) qFatal("no copy");
      return dir;
    };
    const QString autosaved = copyRun();
    QVERIFY(window->files().hasUnsavedSteps());
    const QByteArray continued = fileBytes(autosaved + "/model.safetensors");
    const QStringList continuedHistory = historyWithoutTimings(autosaved);

    window->setFinishedRunPrompt([](int) { return FinishedRunChoice{FinishedRunChoice::Action::StartOver, 0}; });
    QStringList questions;
    auto answer = QMessageBox::Cancel;
    window->files().setPrompt([&](const QString& question) {
      questions << question;
      return answer;
    });
    train->trigger();
    QCOMPARE(questions.size(), 1);
    QVERIFY2(questions[0].contains("13 trained steps that are not saved"), qPrintable(questions[0]));
    QCOMPARE(window->session().state(), State::Finished);  // Cancel: the run stays as it was
    QCOMPARE(stepsShown(*window), 13);
    QVERIFY(window->files().hasUnsavedSteps());
    QCOMPARE(fileBytes(copyRun() + "/model.safetensors"), continued);

    answer = QMessageBox::Discard;
    train->trigger();
    QCOMPARE(questions.size(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(window->session().state() == State::Finished && stepsShown(*window) == 13, 60000);
    const auto& points = window->lossHistory().points();
    QCOMPARE(int(points.size()), 13);  // from step 1 again, not 13 more
    QCOMPARE(points.front().step, 1);
    const QString restarted = copyRun();
    QVERIFY(historyWithoutTimings(restarted) != continuedHistory);  // one schedule over 13 steps
    QVERIFY(fileBytes(restarted + "/model.safetensors") != continued);
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  // A new machine: settings and data folders of this test only.
  QTemporaryDir home;
  qputenv("XDG_CONFIG_HOME", home.filePath("config").toUtf8());
  qputenv("XDG_DATA_HOME", home.filePath("data").toUtf8());
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Attention Lab"));
  QApplication::setOrganizationName(QStringLiteral("attnlab"));
  KeepingWorkTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_keeping_work.moc"
