// A save that cannot be written, on a read-only folder or a full disk, fails with the reason and
// the folder's name, leaves the checkpoint already there as it was and no temporary folder beside
// it, and changes nothing in memory: training goes on and the next save writes the same bytes.
// Covered for attnlab-cli train, for saveCheckpoint (through save_loop) and for the app's save
// (TrainingSession::save on its worker).
//
// Tests may run as root, where file permissions stop no writes: a read-only folder is a read-only
// bind mount in a private mount namespace (unshare -m; skipped where namespaces are not allowed),
// and a full disk is RLIMIT_FSIZE with SIGXFSZ ignored, so writes past the limit fail with EFBIG.
#include <sys/resource.h>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <map>

#include "../cli_support.h"
#include "core/files.h"
#include "training_session.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

constexpr rlim_t kTinyFileLimit = 4096;  // bytes: below every weights file, above nothing that matters

using Folder = std::map<std::string, std::string>;

Folder readFolder(const fs::path& dir) {
  Folder files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::string bytes;
    if (const std::string why = readWholeFile(entry.path().string(), bytes); !why.empty()) qFatal("%s", why.c_str());
    files[fs::relative(entry.path(), dir).string()] = std::move(bytes);
  }
  return files;
}

int entriesIn(const fs::path& dir) { return static_cast<int>(std::distance(fs::directory_iterator(dir), fs::directory_iterator())); }

const QStringList kTinyRun = {"--preset", "default", "--set", "model.d_model=16", "--set", "model.n_layers=2",
                              "--set", "model.n_heads=2", "--set", "model.d_ff=32", "--set", "model.context=16",
                              "--set", "train.batch=4", "--set", "train.eval_every=1000", "--quiet"};

ExperimentConfig tinyConfig() {
  ExperimentConfig c;
  c.task.name = "copy";
  c.model.d_model = 16;
  c.model.n_layers = 2;
  c.model.n_heads = 2;
  c.model.d_ff = 32;
  c.model.context = 16;
  c.train.steps = 400;
  c.train.batch = 4;
  c.train.warmup = 20;
  c.train.eval_every = 1000;
  return c;
}

// Runs `program arguments` with `folder` made read-only for it alone.
Run runOnReadOnly(const QString& folder, const QString& program, const QStringList& arguments) {
  return runProgram(QStringLiteral("unshare"),
                    QStringList{"-m", "sh", "-c", "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\"",
                                folder, program} +
                        arguments);
}

// Runs `program arguments` with files limited to kTinyFileLimit bytes.
Run runOnFullDisk(const QString& program, const QStringList& arguments) {
  QProcess process;
  process.setChildProcessModifier([] {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{kTinyFileLimit, kTinyFileLimit};
    ::setrlimit(RLIMIT_FSIZE, &limit);
  });
  process.start(program, arguments);
  Run run;
  if (!process.waitForFinished(5 * 60 * 1000)) return run;
  run.exitCode = process.exitCode();
  run.out = process.readAllStandardOutput();
  run.err = process.readAllStandardError();
  return run;
}

// Waits for the session's next saved(); returns its error ("" on success).
QString saveAndWait(TrainingSession& session, const QString& dir) {
  QSignalSpy saved(&session, &TrainingSession::saved);
  session.save(dir);
  if (saved.isEmpty() && !saved.wait(60000)) return QStringLiteral("no saved() signal");
  return saved.first().at(2).toString();
}

}  // namespace

class TestSaveFailures : public QObject {
  Q_OBJECT
  QTemporaryDir work_;
  fs::path root_;
  Folder refA_;

  // A fresh folder holding only a copy of checkpoint A at <folder>/run.
  fs::path folderWithCheckpoint(const char* name) {
    const fs::path folder = root_ / name;
    fs::create_directories(folder);
    fs::copy(root_ / "ref-a", folder / "run", fs::copy_options::recursive);
    return folder;
  }

  void checkUntouched(const fs::path& folder) {
    QCOMPARE(readFolder(folder / "run"), refA_);
    QCOMPARE(entriesIn(folder), 1);  // no temporary folder left beside it
  }

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    root_ = work_.path().toStdString();
    const Run prepared = runProgram(QStringLiteral(SAVE_LOOP), {"prepare", work_.path()});
    QVERIFY2(prepared.exitCode == 0, prepared.err.constData());
    refA_ = readFolder(root_ / "ref-a");
  }

  void readOnlyFolder_data() {
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("target");
    const QString cli = cliPath(), loop = QStringLiteral(SAVE_LOOP), dir = work_.path();
    QTest::newRow("attnlab-cli train") << cli << (QStringList{"train"} + kTinyRun + QStringList{"--steps", "5", "--out"}) << "ro-cli/run";
    QTest::newRow("saveCheckpoint") << loop << QStringList{"engine-once", dir} << "ro-engine/run";
    QTest::newRow("the app's save") << loop << QStringList{"session-once", dir} << "ro-session/run";
  }
  void readOnlyFolder() {
    QFETCH(QString, program);
    QFETCH(QStringList, arguments);
    QFETCH(QString, target);
    if (runProgram(QStringLiteral("unshare"), {"-m", "true"}).exitCode != 0)
      QSKIP("no private mount namespaces here (unshare -m), so no read-only folder for root");
    const fs::path folder = folderWithCheckpoint(target.section('/', 0, 0).toUtf8().constData());
    const QString out = QString::fromStdString((folder / "run").string());
    const Run run = runOnReadOnly(QString::fromStdString(folder.string()), program, arguments + QStringList{out});
    QVERIFY2(run.exitCode != 0, run.out.constData());
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(err.contains("Read-only file system"), qPrintable(err));
    QVERIFY2(err.contains(QString::fromStdString(folder.string())), qPrintable(err));
    checkUntouched(folder);
  }

  void fullDisk_data() {
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("target");
    const QString cli = cliPath(), loop = QStringLiteral(SAVE_LOOP), dir = work_.path();
    // 501 steps: the autosave at step 500 fails first, and training goes on to the final save.
    QTest::newRow("attnlab-cli train") << cli << (QStringList{"train"} + kTinyRun + QStringList{"--steps", "501", "--out"}) << "full-cli";
    QTest::newRow("saveCheckpoint") << loop << QStringList{"engine-once", dir} << "full-engine";
    QTest::newRow("the app's save") << loop << QStringList{"session-once", dir} << "full-session";
  }
  void fullDisk() {
    QFETCH(QString, program);
    QFETCH(QStringList, arguments);
    QFETCH(QString, target);
    const fs::path folder = folderWithCheckpoint(target.toUtf8().constData());
    const QString out = QString::fromStdString((folder / "run").string());
    const Run run = runOnFullDisk(program, arguments + QStringList{out});
    QVERIFY2(run.exitCode != 0, run.out.constData());
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(err.contains("File too large"), qPrintable(err));
    QVERIFY2(err.contains(out + ": not saved"), qPrintable(err));
    if (program == cliPath()) QVERIFY2(err.contains("the autosave at step 500 failed, training goes on"), qPrintable(err));
    checkUntouched(folder);
  }

  // In this process, while a session trains: the failed save changes nothing in memory (the saves
  // before and after it write the same bytes) and training goes on.
  void appSaveFailsAndTrainingGoesOn() {
    TrainingSession session;
    QSignalSpy paused(&session, &TrainingSession::pausedAt);
    session.setPauseAtStep(20);
    session.start(tinyConfig());
    QVERIFY(paused.wait(60000));
    const QString before = QString::fromStdString((root_ / "session-before").string());
    const QString failed = QString::fromStdString((root_ / "session-failed").string());
    const QString after = QString::fromStdString((root_ / "session-after").string());
    QCOMPARE(saveAndWait(session, before), QString());

    ::signal(SIGXFSZ, SIG_IGN);
    rlimit original{};
    ::getrlimit(RLIMIT_FSIZE, &original);
    const rlimit tiny{kTinyFileLimit, original.rlim_max};
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
    const QString error = saveAndWait(session, failed);
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &original), 0);
    QVERIFY2(error.contains(failed + ": not saved") && error.contains("File too large"), qPrintable(error));
    QVERIFY(!fs::exists(failed.toStdString()));
    for (const auto& entry : fs::directory_iterator(root_))
      QVERIFY2(entry.path().filename().string().rfind("session-failed.", 0) != 0, entry.path().c_str());

    QCOMPARE(saveAndWait(session, after), QString());
    QCOMPARE(readFolder(after.toStdString()), readFolder(before.toStdString()));

    int lastStep = 0;
    connect(&session, &TrainingSession::lossPointsAdded, this, [&](const std::vector<LossPoint>& p) { lastStep = p.back().step; });
    session.resume();
    QTRY_VERIFY_WITH_TIMEOUT(lastStep > 25, 60000);
    session.reset();
  }
};

QTEST_GUILESS_MAIN(TestSaveFailures)
#include "test_save_failures.moc"
