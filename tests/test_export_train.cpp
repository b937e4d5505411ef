// The PyTorch export end to end: attnlab-cli export pytorch and data, then the exported train.py
// under torchrun (2 CPU processes, gloo on loopback) trains the induction preset to >= 99% accuracy
// and attnlab-cli eval opens the result; one process reproduces the lab's own trainer step by step;
// a run killed mid-way leaves its last checkpoint readable; bad input gets one line, no traceback.
// Needs Debian's python3-torch (scripts/install_torch.sh installs it).
#include <QtTest>

#include "cli_support.h"

namespace {

const QString kPython = "/usr/bin/python3";

QStringList csvRows(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
  if (!lines.isEmpty()) lines.removeFirst();  // the header
  return lines;
}

double cell(const QString& row, int column) { return row.split(',').value(column).toDouble(); }

QJsonObject evalJson(const QString& model) {
  const Run run = runCli({"eval", "--model", model, "--json"});
  return run.exitCode == 0 ? QJsonDocument::fromJson(run.out).object() : QJsonObject{{"error", QString(run.err)}};
}

// One line on stderr starting with `prefix`, no Python traceback, a failing exit code.
void verifyOneLine(const Run& run, const QByteArray& prefix, const QByteArray& contains) {
  const QByteArray err = run.err.trimmed();
  QVERIFY2(run.exitCode != 0, err.constData());
  QVERIFY2(!err.contains('\n') && !err.contains("Traceback"), err.constData());
  QVERIFY2(err.startsWith(prefix) && err.contains(contains), err.constData());
}

}  // namespace

class TestExportTrain : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString dir(const QString& name) const { return tmp_.path() + "/" + name; }
  QString trainPy() const { return dir("export/train.py"); }

 private slots:
  void initTestCase() {
    const Run install = runProgram("bash", {ATTNLAB_SOURCE_DIR "/scripts/install_torch.sh"});
    QVERIFY2(install.exitCode == 0, ("the export tests need Debian's python3-torch: " + install.err).constData());
    QVERIFY(tmp_.isValid());
    Run run = runCli({"export", "pytorch", "--preset", "induction", "--out", dir("export")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    for (const char* file : {"train.py", "README.md", "attnlab_torch/model.py", "init/config.json", "init/model.safetensors"})
      QVERIFY2(QFileInfo::exists(dir("export/") + file), file);
    // 300 steps of 64 x 31 tokens
    run = runCli({"data", "--preset", "induction", "--tokens", "595200", "--out", dir("data")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(QFileInfo(dir("data/train.tokens")).size(), qint64(300 * 64 * 31 * 4));
  }

  // One process, the lab's initial weights and batches: the same losses as the lab's own trainer.
  void oneProcessMatchesTheLabsTrainer() {
    Run run = runProgram(kPython, {trainPy(), "--data", dir("data"), "--out", dir("one"), "--steps", "8", "--threads", "1"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    run = runCli({"train", "--preset", "induction", "--steps", "8", "--threads", "1", "--quiet", "--out", dir("lab")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QStringList ours = csvRows(dir("one/history.csv")), lab = csvRows(dir("lab/history.csv"));
    QCOMPARE(ours.size(), 8);
    QCOMPARE(lab.size(), 8);
    for (int i = 0; i < 8; ++i)
      for (int column : {1, 4, 5}) {  // loss, lr, grad_norm
        const double a = cell(ours[i], column), b = cell(lab[i], column);
        QVERIFY2(std::abs(a - b) <= 1e-5 * std::abs(b), qPrintable(QString("step %1 column %2: %3 vs the lab's %4").arg(i + 1).arg(column).arg(a).arg(b)));
      }
    QVERIFY(std::abs(cell(ours[7], 2) - cell(lab[7], 2)) <= 1e-5 * cell(lab[7], 2));  // validation loss at the end
  }

  // accumulated_rotation with omega_mode 1: the engine's per-token table travels as omega_table.safetensors,
  // so train.py's losses equal the lab's step by step, and its checkpoint keeps the table.
  void fixedAngleTableTrainsAsTheLab() {
    const QStringList omega = {"--set", "model.positional=accumulated_rotation", "--set", "model.positional_settings.omega_mode=1"};
    Run run = runCli(QStringList{"export", "pytorch", "--preset", "induction", "--out", dir("omega-export")} + omega);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY(QFileInfo::exists(dir("omega-export/init/omega_table.safetensors")));
    run = runCli(QStringList{"data", "--preset", "induction", "--tokens", "10000", "--out", dir("omega-data")} + omega);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    run = runProgram(kPython, {dir("omega-export/train.py"), "--data", dir("omega-data"), "--out", dir("omega-run"), "--steps", "4", "--threads", "1"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    run = runCli(QStringList{"train", "--preset", "induction", "--steps", "4", "--threads", "1", "--quiet", "--out", dir("omega-lab")} + omega);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QStringList ours = csvRows(dir("omega-run/history.csv")), lab = csvRows(dir("omega-lab/history.csv"));
    QCOMPARE(ours.size(), 4);
    QCOMPARE(lab.size(), 4);
    for (int i = 0; i < 4; ++i)
      for (int column : {1, 5}) {  // loss, grad_norm
        const double a = cell(ours[i], column), b = cell(lab[i], column);
        QVERIFY2(std::abs(a - b) <= 1e-5 * std::abs(b), qPrintable(QString("step %1 column %2: %3 vs the lab's %4").arg(i + 1).arg(column).arg(a).arg(b)));
      }
    QVERIFY(QFileInfo::exists(dir("omega-run/checkpoint/omega_table.safetensors")));
    const QJsonObject eval = evalJson(dir("omega-run/checkpoint"));
    QVERIFY2(eval.contains("loss"), QJsonDocument(eval).toJson().constData());
    // the table is drawn from the seed: a trained model's seed stays
    verifyOneLine(runCli({"export", "pytorch", "--model", dir("omega-lab"), "--set", "train.seed=9", "--out", dir("omega-refused")}),
                  "attnlab-cli: --set train.seed: this model's per-token angle table", "");
    QVERIFY(!QFileInfo::exists(dir("omega-refused")));
  }

  void twoProcessesWithTorchrunReachInductionAccuracy() {
    QElapsedTimer timer;
    timer.start();
    QProcess torchrun;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("GLOO_SOCKET_IFNAME", "lo");  // loopback only
    env.insert("OMP_NUM_THREADS", "1");
    torchrun.setProcessEnvironment(env);
    // --redirects 1 --tee 1: Debian 12's torchrun (torch 1.13 on Python 3.11) fails on its default "0"
    torchrun.start(kPython, {"-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "--redirects", "1",
                             "--tee", "1", "--log_dir", dir("torchrun-logs"), trainPy(), "--data", dir("data"), "--out",
                             dir("run"), "--steps", "600", "--threads", "1"});  // the preset's own budget: its phase change comes near 250-300 steps
    QVERIFY(torchrun.waitForFinished(10 * 60 * 1000));
    QVERIFY2(torchrun.exitCode() == 0, torchrun.readAllStandardError().right(2000).constData());
    qInfo("torchrun, 2 CPU processes, 600 steps of the induction preset: %.1f s", timer.elapsed() / 1000.0);
    QVERIFY(torchrun.readAllStandardOutput().contains("on 2 process(es)"));
    QCOMPARE(csvRows(dir("run/history.csv")).size(), 600);
    QCOMPARE(csvRows(dir("run/checkpoint/history.csv")).size(), 600);
    const QJsonObject eval = evalJson(dir("run/checkpoint"));
    qInfo("attnlab-cli eval of the torchrun checkpoint: accuracy %.4f, loss %.5f", eval["accuracy"].toDouble(), eval["loss"].toDouble());
    QVERIFY2(eval["accuracy"].toDouble() >= 0.99, QJsonDocument(eval).toJson().constData());
  }

  void aKilledRunLeavesItsLastCheckpointReadable() {
    QProcess train;
    train.start(kPython, {trainPy(), "--data", dir("data"), "--out", dir("killed"), "--steps", "100000", "--checkpoint-every",
                          "3", "--threads", "1"});
    QVERIFY(train.waitForStarted());
    QDeadlineTimer deadline(3 * 60 * 1000);
    while (csvRows(dir("killed/history.csv")).size() < 10 && !deadline.hasExpired()) QThread::msleep(20);
    train.kill();  // SIGKILL, wherever it is (possibly inside a save)
    train.waitForFinished();
    const QJsonObject eval = evalJson(dir("killed/checkpoint"));
    QVERIFY2(eval.contains("loss"), QJsonDocument(eval).toJson().constData());
    const int saved = csvRows(dir("killed/checkpoint/history.csv")).size();
    QVERIFY2(saved >= 9 && saved % 3 == 0, qPrintable(QString::number(saved)));
  }

  void badInputGetsOneLine() {
    // a folder that is not a lab run, for the exporter and for train.py
    QDir().mkpath(dir("not-a-run"));
    verifyOneLine(runCli({"export", "pytorch", "--model", dir("not-a-run"), "--out", dir("x")}), "attnlab-cli: ", "config.json");
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("data"), "--out", dir("bad1"), "--init", dir("not-a-run")}),
                  "train.py: ", "config.json: not found");
    // data of the wrong format: not a data folder, a truncated token file, ids outside the vocabulary
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("not-a-run"), "--out", dir("bad2")}), "train.py: ", "data.json: not found");
    QDir().mkpath(dir("short"));
    for (const char* f : {"data.json", "train.targets", "validation.tokens", "validation.targets"})
      QVERIFY(QFile::copy(dir("data/") + f, dir("short/") + f));
    QFile tokens(dir("short/train.tokens"));
    QVERIFY(tokens.open(QIODevice::WriteOnly));
    tokens.write(QByteArray(1000, '\x01'));
    tokens.close();
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("short"), "--out", dir("bad3")}), "train.py: ", "holds 1000 bytes, expected");
    QVERIFY(tokens.open(QIODevice::WriteOnly));
    tokens.write(QByteArray(300 * 64 * 31 * 4, '\x7f'));  // every id 0x7f7f7f7f
    tokens.close();
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("short"), "--out", dir("bad4")}), "train.py: ", "outside the vocabulary");
    // missing torch: the interpreter without its site packages
    verifyOneLine(runProgram(kPython, {"-S", trainPy(), "--data", dir("data"), "--out", dir("bad5")}), "train.py: ", "PyTorch is not installed");
    // FSDP where it cannot run: one process (and, with Debian's torch 1.13 on Python 3.11, not importable at all)
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("data"), "--out", dir("bad8"), "--fsdp"}), "train.py: ", "");
    // a run folder already in use
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("data"), "--out", dir("run")}), "train.py: ", "--resume");
    // data for another model
    Run run = runCli({"data", "--task", "copy", "--tokens", "1000", "--out", dir("copy-data")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    verifyOneLine(runProgram(kPython, {trainPy(), "--data", dir("copy-data"), "--out", dir("bad6")}), "train.py: ", "vocabulary");
    verifyOneLine(runCli({"data", "--task", "no_such_task", "--tokens", "10", "--out", dir("bad7")}), "attnlab-cli: ", "no_such_task");
  }
};

QTEST_GUILESS_MAIN(TestExportTrain)
#include "test_export_train.moc"
