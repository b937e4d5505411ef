// An imported Hugging Face model trained outside the lab comes back into it: tiny random gpt2,
// llama (a declared context of 131,072), qwen2 and gpt_neox folders (tests/hf/hf_reference.py
// --write-tiny) are exported with attnlab-cli export pytorch, trained 3 steps by the exported
// train.py (llama under torchrun with 2 processes on gloo) on a data folder of the user's own ids,
// and each checkpoint then opens in the lab: attnlab-cli eval evaluates it on the data it trained
// on at the data's sequence length, the lab's logits equal attnlab_torch's to 1e-4, and File >
// Watch Run Folder shows the run in the window's views and follows its next checkpoint.
// Needs Debian's python3-torch (scripts/install_torch.sh installs it).
#include <QApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "attention_map_model.h"
#include "../cli_support.h"
#include "experiment_files.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "main_window.h"
#include "run_folder_watcher.h"
#include "../tiny_hf_folder.h"

using namespace attnlab;

namespace {

const QString kPython = "/usr/bin/python3";
const QString kHelper = ATTNLAB_SOURCE_DIR "/tests/export/hf_run_check.py";
const QStringList kArchitectures = {"gpt2", "llama", "qwen2", "neox_parallel"};

QJsonObject readJson(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject{};
}

int stepsShown(const MainWindow& window) {
  const auto& points = window.lossHistory().points();
  return points.empty() ? 0 : points.back().step;
}

}  // namespace

class ExportHfRunTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString dir(const QString& name) const { return tmp_.path() + "/" + name; }

  // torchrun with `processes` CPU processes on loopback (Debian 12's torchrun needs --redirects/--tee).
  Run train(const QString& arch, const QStringList& extra, int processes) {
    const QStringList script = QStringList{dir("export/" + arch + "/train.py"), "--data", dir("data/" + arch), "--out",
                                           dir("run/" + arch), "--threads", "1"} + extra;
    if (processes == 1) return runProgram(kPython, script);
    QProcess torchrun;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("GLOO_SOCKET_IFNAME", "lo");
    env.insert("OMP_NUM_THREADS", "1");
    torchrun.setProcessEnvironment(env);
    torchrun.start(kPython, QStringList{"-m", "torch.distributed.run", "--standalone", "--nproc_per_node", QString::number(processes),
                                        "--redirects", "1", "--tee", "1", "--log_dir", dir("torchrun-logs-" + arch)} + script);
    Run run;
    if (!torchrun.waitForFinished(5 * 60 * 1000)) return run;
    run.exitCode = torchrun.exitCode(), run.out = torchrun.readAllStandardOutput(), run.err = torchrun.readAllStandardError();
    return run;
  }

 private slots:
  void initTestCase() {
    const Run install = runProgram("bash", {ATTNLAB_SOURCE_DIR "/scripts/install_torch.sh"});
    QVERIFY2(install.exitCode == 0, ("this test needs Debian's python3-torch: " + install.err).constData());
    QVERIFY(tmp_.isValid());
    const Run tiny = runProgram(kPython, {ATTNLAB_SOURCE_DIR "/tests/hf/hf_reference.py", "--write-tiny", dir("hf")});
    QVERIFY2(tiny.exitCode == 0, tiny.err.constData());
    QCOMPARE(readJson(dir("hf/llama/config.json"))["max_position_embeddings"].toInt(), 131072);
  }

  void trainedCheckpointsOpenInTheLab() {
    QStringList compared;  // checkpoint, trace file, ...
    for (const QString& arch : kArchitectures) {
      Run run = runCli({"export", "pytorch", "--model", dir("hf/" + arch), "--out", dir("export/" + arch)});
      QVERIFY2(run.exitCode == 0, run.err.constData());
      const int vocab = readJson(dir("export/" + arch + "/init/config.json"))["model"].toObject()["vocab"].toInt();
      run = runProgram(kPython, {kHelper, "data", dir("data/" + arch), QString::number(vocab)});
      QVERIFY2(run.exitCode == 0, run.err.constData());
      run = train(arch, {"--steps", "3"}, arch == "llama" ? 2 : 1);
      QVERIFY2(run.exitCode == 0, (arch + ": " + run.err.right(2000)).toUtf8().constData());
      const QString checkpoint = dir("run/" + arch + "/checkpoint");
      // what describes the Hugging Face folder travels with every checkpoint, as the lab's own fine-tuning keeps it
      QVERIFY2(QFileInfo::exists(checkpoint + "/pretrained/config.json"), qPrintable(arch));
      QCOMPARE(readJson(checkpoint + "/config.json")["task"].toObject()["text_path"].toString(), dir("data/" + arch));

      // eval on the data the run trained on, at the data's 16 tokens (not llama's context of 131,072)
      run = runCli({"eval", "--model", checkpoint, "--json"});
      QVERIFY2(run.exitCode == 0, (arch + ": " + run.err).toUtf8().constData());
      const QJsonObject eval = QJsonDocument::fromJson(run.out).object();
      QCOMPARE(eval["tokens"].toInt(), 4 * 16 * 16);  // train.eval_batches x train.batch x seq_len
      const double loss = eval["loss"].toDouble();
      QVERIFY2(std::isfinite(loss) && loss > 0 && loss < 2 * std::log(vocab), qPrintable(arch + QString(": loss %1").arg(loss)));

      run = runCli({"trace", "--model", checkpoint, "--ids", "3,17,5,0,29,11,11,2,8,23", "--logits", "--out", dir(arch + "-trace.json")});
      QVERIFY2(run.exitCode == 0, run.err.constData());
      compared << checkpoint << dir(arch + "-trace.json");
      // and back to the Hugging Face layout, as the lab's own fine-tuning checkpoints go
      run = runCli({"export-hf", "--model", checkpoint, "--out", dir("back/" + arch)});
      QVERIFY2(run.exitCode == 0, (arch + ": " + run.err).toUtf8().constData());
      qInfo("%s: eval loss %.4f on the data it trained on", qPrintable(arch), loss);
    }
    // a checkpoint whose data folder moved: one line naming it, and eval --data takes the new place
    const QString gpt2 = dir("run/gpt2/checkpoint");
    const double before = QJsonDocument::fromJson(runCli({"eval", "--model", gpt2, "--json"}).out).object()["loss"].toDouble();
    QVERIFY(QDir().rename(dir("data/gpt2"), dir("data/gpt2-moved")));
    Run moved = runCli({"eval", "--model", gpt2});
    QVERIFY2(moved.exitCode != 0 && !moved.err.trimmed().contains('\n') && moved.err.contains("data.json"), moved.err.constData());
    moved = runCli({"eval", "--model", gpt2, "--data", dir("data/gpt2-moved"), "--json"});
    QVERIFY2(moved.exitCode == 0, moved.err.constData());
    QCOMPARE(QJsonDocument::fromJson(moved.out).object()["loss"].toDouble(), before);
    moved = runCli({"eval", "--model", gpt2, "--data", dir("data/llama"), "--json"});  // another model's data
    QVERIFY2(moved.exitCode != 0 && moved.err.contains("vocabulary"), moved.err.constData());

    // the lab's logits of each checkpoint against attnlab_torch's (the package is the same in every export)
    const Run run = runProgram(kPython, QStringList{kHelper, "logits", dir("export/llama")} + compared);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QList<QByteArray> errors = run.out.trimmed().split('\n');
    QCOMPARE(errors.size(), kArchitectures.size());
    for (int i = 0; i < errors.size(); ++i) {
      qInfo("%s: logits of the lab vs attnlab_torch differ by %s relative", qPrintable(kArchitectures[i]), errors[i].constData());
      QVERIFY2(errors[i].toDouble() <= 1e-4, qPrintable(kArchitectures[i] + ": " + errors[i]));
    }
  }

  // A corpus through the model's own tokenizer (attnlab-cli data --text --tokenizer init/pretrained):
  // the run's checkpoint opens with that tokenizer as its vocabulary.
  void textThroughTheModelsTokenizer() {
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir("hf/gpt2-tok").toStdString())), QString());
    Run run = runCli({"export", "pytorch", "--model", dir("hf/gpt2-tok"), "--out", dir("export/gpt2-tok")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY(QFileInfo::exists(dir("export/gpt2-tok/init/pretrained/tokenizer.json")));
    QFile corpus(dir("corpus.txt"));
    QVERIFY(corpus.open(QIODevice::WriteOnly));
    for (int i = 0; i < 200; ++i) corpus.write("the cat sat on the mat, and the dog sat on the log. ");
    corpus.close();
    run = runCli({"data", "--text", dir("corpus.txt"), "--tokenizer", dir("export/gpt2-tok/init/pretrained"), "--set", "task.seq_len=24",
                  "--tokens", "2000", "--out", dir("data/gpt2-tok")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonObject meta = readJson(dir("data/gpt2-tok/data.json"));
    QCOMPARE(meta["vocab"].toInt(), tiny_hf::kVocab);  // the model's embedding rows
    QCOMPARE(meta["seq_len"].toInt(), 24);
    run = train("gpt2-tok", {"--steps", "2"}, 1);
    QVERIFY2(run.exitCode == 0, run.err.constData());
    run = runCli({"eval", "--model", dir("run/gpt2-tok/checkpoint"), "--json"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(QJsonDocument::fromJson(run.out).object()["tokens"].toInt(), 4 * 16 * 24);
    run = runCli({"trace", "--model", dir("run/gpt2-tok/checkpoint"), "--text", "the cat", "--out", dir("tok-trace.json")});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(readJson(dir("tok-trace.json"))["tokens"].toArray().size() >= 2, run.out.constData());
  }

  void watchedRunShowsEachNewCheckpoint() {
    ExperimentConfig defaults;
    QCOMPARE(loadPreset("default", defaults), std::string());
    MainWindow window(defaults, "default");
    window.show();
    QCOMPARE(window.runWatcher().watch(dir("run/llama")), QString());
    QVERIFY(QTest::qWaitFor([&] { return stepsShown(window) == 3 && window.attentionMap().step() == 3; }, 30000));
    QCOMPARE(QString::fromStdString(window.config().name), QString("llama"));
    QCOMPARE(window.config().model.context, 131072);
    QTest::qWait(1100);  // file times of the next checkpoint differ even on coarse clocks
    const Run more = train("llama", {"--resume", "--steps", "5"}, 1);
    QVERIFY2(more.exitCode == 0, more.err.constData());
    QVERIFY(QTest::qWaitFor([&] { return stepsShown(window) == 5 && window.attentionMap().step() == 5; }, 30000));
    QCOMPARE(window.lossHistory().points().size(), size_t(5));
    window.runWatcher().stop();
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QTemporaryDir settings;  // settings and standard paths of this test only
  QStandardPaths::setTestModeEnabled(true);
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("attnlab-test"));
  QApplication::setApplicationName(QStringLiteral("test_export_hf_run"));
  ExportHfRunTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_export_hf_run.moc"
