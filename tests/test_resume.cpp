// Exact resume: a run stopped at step 100 and continued from its checkpoint ends bit for bit where
// the uninterrupted 200-step run ends (weights, optimiser moments, and every history column but
// the timings), through the engine and through 'attnlab-cli train --stop-at / --resume'. A
// checkpoint without the optimiser state (an older version's) still opens and says that training
// on restarts the optimiser; a damaged state is refused with the file and the reason.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>

#include "cli_support.h"
#include "io/checkpoint.h"
#include "core/files.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

const QStringList kTinyFlags = {"--preset", "default", "--set", "model.d_model=16", "--set", "model.n_layers=2",
                                "--set", "model.n_heads=2", "--set", "model.d_ff=32", "--set", "model.context=16",
                                "--set", "train.batch=4", "--set", "train.eval_every=50", "--set", "train.warmup=20",
                                "--steps", "200", "--quiet"};

ExperimentConfig tinyConfig() {
  ExperimentConfig c;
  c.task.name = "copy";
  c.model.d_model = 16;
  c.model.n_layers = 2;
  c.model.n_heads = 2;
  c.model.d_ff = 32;
  c.model.context = 16;
  c.train.steps = 200;
  c.train.batch = 4;
  c.train.warmup = 20;
  c.train.eval_every = 50;
  return c;
}

std::string fileBytes(const fs::path& path) {
  std::string bytes;
  const std::string why = readWholeFile(path.string(), bytes);
  if (!why.empty()) qFatal("%s", why.c_str());
  return bytes;
}

// history.csv without its timing columns (tokens_per_second, seconds: the 7th and 8th).
QStringList historyWithoutTimings(const fs::path& dir) {
  QStringList rows;
  for (const QString& line : QString::fromStdString(fileBytes(dir / "history.csv")).split('\n', Qt::SkipEmptyParts)) {
    QStringList cells = line.split(',');
    cells.remove(6, 2);
    rows << cells.join(',');
  }
  return rows;
}

void compareWeightsExactly(const Trainer& a, const Trainer& b) {
  const auto& pa = a.model().params().all();
  const auto& pb = b.model().params().all();
  QCOMPARE(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    QVERIFY2(std::memcmp(pa[i]->value.data(), pb[i]->value.data(), pa[i]->value.size() * sizeof(float)) == 0,
             pa[i]->name.c_str());
  for (size_t i = 0; i < pa.size(); ++i)
    QVERIFY(std::memcmp(a.optimizer().secondMoments()[i].data(), b.optimizer().secondMoments()[i].data(),
                        pa[i]->value.size() * sizeof(float)) == 0);
}

void removeTrainingState(const fs::path& dir) {
  fs::remove(dir / "optimizer.safetensors");
  fs::remove(dir / "training_state.json");
}

}  // namespace

class TestResume : public QObject {
  Q_OBJECT
 private slots:
  void aResumedRunIsTheUninterruptedRun() {
    Trainer straight(tinyConfig());
    while (!straight.finished()) straight.trainStep();

    QTemporaryDir dir;
    const std::string folder = dir.filePath("half").toStdString();
    {
      Trainer first(tinyConfig());
      while (first.stepsDone() < 100) first.trainStep();
      QCOMPARE(QString::fromStdString(saveCheckpoint(folder, first)), QString());
    }
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder, loaded)), QString());
    QCOMPARE(QString::fromStdString(loaded.notice), QString());
    Trainer& resumed = *loaded.trainer;
    QCOMPARE(resumed.stepsDone(), 100);
    QCOMPARE(resumed.optimizer().steps(), 100);
    while (!resumed.finished()) resumed.trainStep();

    compareWeightsExactly(straight, resumed);
    QCOMPARE(resumed.history().size(), straight.history().size());
    for (size_t i = 0; i < straight.history().size(); ++i) {
      const TrainPoint &s = straight.history()[i], &r = resumed.history()[i];
      QCOMPARE(r.step, s.step);
      QVERIFY2(r.loss == s.loss && r.lr == s.lr && r.grad_norm == s.grad_norm, qPrintable(QString::number(s.step)));
      QVERIFY(r.val_loss == s.val_loss || (std::isnan(r.val_loss) && std::isnan(s.val_loss)));
    }
  }

  // An older checkpoint (no optimizer.safetensors, no training_state.json) opens, says so, and
  // trains on with fresh moments, so the run no longer matches the uninterrupted one.
  void anOlderCheckpointOpensAndSaysTheOptimiserRestarts() {
    QTemporaryDir dir;
    const fs::path folder = dir.filePath("old").toStdString();
    Trainer first(tinyConfig());
    while (first.stepsDone() < 10) first.trainStep();
    QCOMPARE(QString::fromStdString(saveCheckpoint(folder.string(), first)), QString());
    removeTrainingState(folder);
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder.string(), loaded)), QString());
    QVERIFY2(loaded.notice.find("restarts the optimiser") != std::string::npos, loaded.notice.c_str());
    QCOMPARE(loaded.trainer->stepsDone(), 10);
    QCOMPARE(loaded.trainer->optimizer().steps(), 0);
    loaded.trainer->trainStep();
    QCOMPARE(loaded.trainer->stepsDone(), 11);
  }

  void aDamagedTrainingStateIsRefusedWithTheReason() {
    QTemporaryDir dir;
    const fs::path folder = dir.filePath("damaged").toStdString();
    Trainer first(tinyConfig());
    first.trainStep();
    QCOMPARE(QString::fromStdString(saveCheckpoint(folder.string(), first)), QString());
    const std::string state = fileBytes(folder / "training_state.json");
    const auto refusedWith = [&](const std::string& expected) {
      LoadedCheckpoint loaded;
      const std::string why = loadCheckpoint(folder.string(), loaded);
      QVERIFY2(why.find(expected) != std::string::npos, why.c_str());
      QVERIFY(!loaded.trainer);
    };

    auto replaced = [&](const std::string& from, const std::string& to) {
      std::string text = state;
      text.replace(text.find(from), from.size(), to);
      QCOMPARE(QString::fromStdString(writeFileAtomic((folder / "training_state.json").string(), text)), QString());
    };
    replaced("\"step\": 1", "\"step\": 7");
    refusedWith("\"step\" is 7 but history.csv ends at step 1");
    replaced("\"data_stream\": \"", "\"data_stream\": \"x");
    refusedWith("\"data_stream\" is not a generator state");
    replaced("\"version\": 1", "\"version\": 9");
    refusedWith("unsupported \"version\"");
    QCOMPARE(QString::fromStdString(writeFileAtomic((folder / "training_state.json").string(), "[")), QString());
    refusedWith("training_state.json: not a JSON object");
    fs::remove(folder / "training_state.json");
    refusedWith("training_state.json: missing, though optimizer.safetensors is there");
  }

  // The command line: --stop-at 100 then --resume gives the same files as 200 steps straight.
  void theCliStopsAtAStepAndResumesExactly() {
    QTemporaryDir dir;
    const QString straight = dir.filePath("straight"), halves = dir.filePath("halves");
    Run run = runCli(QStringList{"train"} + kTinyFlags + QStringList{"--out", straight});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    run = runCli(QStringList{"train"} + kTinyFlags + QStringList{"--out", halves, "--stop-at", "100"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    LoadedCheckpoint half;
    QCOMPARE(QString::fromStdString(loadCheckpoint(halves.toStdString(), half)), QString());
    QCOMPARE(half.trainer->stepsDone(), 100);

    run = runCli({"train", "--resume", halves, "--stop-at", "50"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--stop-at 50 is not after step 100"), run.err.constData());
    run = runCli({"train", "--resume", halves, "--steps", "300"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--steps cannot be changed"), run.err.constData());

    run = runCli({"train", "--resume", halves, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.err.isEmpty(), run.err.constData());
    const fs::path a = straight.toStdString(), b = halves.toStdString();
    QVERIFY(fileBytes(a / "model.safetensors") == fileBytes(b / "model.safetensors"));
    QVERIFY(fileBytes(a / "optimizer.safetensors") == fileBytes(b / "optimizer.safetensors"));
    QVERIFY(fileBytes(a / "training_state.json") == fileBytes(b / "training_state.json"));
    QCOMPARE(historyWithoutTimings(b), historyWithoutTimings(a));
    QCOMPARE(historyWithoutTimings(a).size(), 201);

    run = runCli({"train", "--resume", halves});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("already done its 200 steps"), run.err.constData());
  }

  void theCliSaysWhenAnOldCheckpointRestartsTheOptimiser() {
    QTemporaryDir dir;
    const QString old = dir.filePath("old");
    Run run = runCli(QStringList{"train"} + kTinyFlags + QStringList{"--out", old, "--stop-at", "20"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    removeTrainingState(old.toStdString());
    run = runCli({"train", "--resume", old, "--stop-at", "30", "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.err.contains("restarts the optimiser"), run.err.constData());
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(old.toStdString(), loaded)), QString());
    QCOMPARE(loaded.trainer->stepsDone(), 30);
    QCOMPARE(loaded.trainer->optimizer().steps(), 10);  // the moments restarted at step 20
  }
};

QTEST_GUILESS_MAIN(TestResume)
#include "test_resume.moc"
