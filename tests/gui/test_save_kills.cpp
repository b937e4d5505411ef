// Saving loses nothing when the saving process is killed. save_loop (beside this test) saves two
// fixed runs into one folder in turn, through attnlab-cli's save (saveCheckpoint) or the app's
// (TrainingSession::save on the worker, as File > Save and the autosave call it); this test kills
// it with SIGKILL at 200 seeded random moments (the CLI's save in children forked by one helper, so
// that the test stays short; the app's in a helper started for each kill). After every kill the folder must hold, file for
// file and byte for byte, one of the two complete checkpoints; at most the one temporary folder
// being written may be left beside it, and the next save must succeed and remove it.
#include <signal.h>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "core/files.h"

namespace fs = std::filesystem;

namespace {

constexpr int kKills = 200;
constexpr unsigned kSeed = 20261201;

using Folder = std::map<std::string, std::string>;  // relative path -> bytes

Folder readFolder(const fs::path& dir) {
  Folder files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::string bytes;
    if (const std::string why = attnlab::readWholeFile(entry.path().string(), bytes); !why.empty()) qFatal("%s", why.c_str());
    files[fs::relative(entry.path(), dir).string()] = std::move(bytes);
  }
  return files;
}

// The folders beside `target` a save leaves while it works: <name>.tmp-* and <name>.old-*.
std::vector<fs::path> leftoversBeside(const fs::path& target) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(target.parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name != target.filename().string() && name.rfind(target.filename().string() + ".", 0) == 0) found.push_back(entry.path());
  }
  return found;
}

// Reads the helper's lines until `line` arrives; false when it exits or 20 s pass first.
bool waitForLine(QProcess& process, const QByteArray& line) {
  while (true) {
    while (process.canReadLine())
      if (process.readLine().trimmed() == line) return true;
    if (!process.waitForReadyRead(20000)) return false;
  }
}

}  // namespace

class TestSaveKills : public QObject {
  Q_OBJECT
  QTemporaryDir work_;
  fs::path target_;
  Folder refA_, refB_;
  std::mt19937 random_{kSeed};
  std::vector<fs::path> leftBefore_;
  int sawA_ = 0, sawB_ = 0, midWrite_ = 0;

  // With `loop` printing "saved" lines: the first save after a kill must succeed and clear what
  // the kill left; then a wait anywhere in the next save and a half, uniformly.
  bool waitThenPickAMoment(QProcess& loop) {
    const auto start = std::chrono::steady_clock::now();
    if (!waitForLine(loop, "saved")) return false;
    const auto oneSave = std::chrono::steady_clock::now() - start;
    for (const fs::path& left : leftBefore_)
      if (fs::exists(left)) qFatal("%s was left by a kill and is still there after the next save", left.c_str());
    std::uniform_int_distribution<long long> at(0, std::chrono::duration_cast<std::chrono::microseconds>(3 * oneSave / 2).count());
    std::this_thread::sleep_for(std::chrono::microseconds(at(random_)));
    return true;
  }

  // After a kill: the folder is one of the two checkpoints, at most one temporary folder beside it.
  void checkFolder(int kill, const char* how) {
    const Folder now = readFolder(target_);
    QVERIFY2(now == refA_ || now == refB_, qPrintable(QStringLiteral("kill %1 (%2): the folder is neither checkpoint").arg(kill).arg(how)));
    (now == refA_ ? sawA_ : sawB_)++;
    leftBefore_ = leftoversBeside(target_);
    QVERIFY2(leftBefore_.size() <= 1, qPrintable(QStringLiteral("kill %1: %2 folders left beside").arg(kill).arg(leftBefore_.size())));
    midWrite_ += !leftBefore_.empty();
  }

 private slots:
  void initTestCase() {
    QVERIFY(work_.isValid());
    QProcess prepare;
    prepare.start(QStringLiteral(SAVE_LOOP), {QStringLiteral("prepare"), work_.path()});
    QVERIFY(prepare.waitForFinished(60000));
    QVERIFY2(prepare.exitCode() == 0, prepare.readAllStandardError().constData());
    const fs::path root = work_.path().toStdString();
    refA_ = readFolder(root / "ref-a"), refB_ = readFolder(root / "ref-b");
    QVERIFY(refA_ != refB_);
    QVERIFY(refA_.count("model.safetensors") && refA_.count("training_state.json") && refA_.count("optimizer.safetensors"));
    target_ = root / "runs" / "kept";
  }

  // attnlab-cli's save (saveCheckpoint), in a child the helper forks for each kill.
  void killTheCliSave() {
    QProcess server;
    server.start(QStringLiteral(SAVE_LOOP), {QStringLiteral("engine-forks"), work_.path(), QString::fromStdString(target_.string())});
    QVERIFY2(waitForLine(server, "ready"), server.readAllStandardError().constData());
    for (int kill = 0; kill < kKills / 2; ++kill) {
      server.write("go\n");
      QVERIFY(server.waitForReadyRead(20000));
      const QByteArray line = server.readLine().trimmed();
      QVERIFY2(line.startsWith("child "), line.constData());
      const pid_t child = line.mid(6).toInt();
      QVERIFY2(waitThenPickAMoment(server), server.readAllStandardError().constData());
      QCOMPARE(::kill(child, SIGKILL), 0);
      QVERIFY2(waitForLine(server, "dead"), server.readAllStandardError().constData());
      checkFolder(kill, "the CLI's save");
    }
    server.closeWriteChannel();
    QVERIFY(server.waitForFinished(20000));
  }

  // The app's save: TrainingSession::save on its worker, File > Save and the autosave in turn.
  void killTheAppSave() {
    for (int kill = kKills / 2; kill < kKills; ++kill) {
      QProcess loop;
      loop.start(QStringLiteral(SAVE_LOOP), {QStringLiteral("session"), work_.path(), QString::fromStdString(target_.string())});
      QVERIFY2(waitForLine(loop, "ready"), loop.readAllStandardError().constData());
      QVERIFY2(waitThenPickAMoment(loop), loop.readAllStandardError().constData());
      loop.kill();  // SIGKILL
      QVERIFY(loop.waitForFinished(10000));
      checkFolder(kill, "the app's save");
    }
  }

  // A kill between the two renames of a file system without the atomic exchange leaves the old
  // checkpoint moved aside and the new one beside it: the next save puts things right.
  void killedBetweenTwoRenames() {
    const fs::path root = work_.path().toStdString();
    const fs::path aside = fs::path(target_.string() + ".old-0badc0de"), fresh = fs::path(target_.string() + ".tmp-0badc0de");
    fs::remove_all(target_);
    for (const fs::path& left : leftoversBeside(target_)) fs::remove_all(left);
    fs::copy(root / "ref-b", aside, fs::copy_options::recursive);
    fs::copy(root / "ref-a", fresh, fs::copy_options::recursive);
    QProcess once;
    once.start(QStringLiteral(SAVE_LOOP), {QStringLiteral("engine-once"), work_.path(), QString::fromStdString(target_.string())});
    QVERIFY(once.waitForFinished(60000));
    QVERIFY2(once.exitCode() == 0, once.readAllStandardError().constData());
    QCOMPARE(readFolder(target_), refA_);
    QVERIFY(leftoversBeside(target_).empty());
  }

  void cleanupTestCase() {
    qInfo("%d kills: the folder held run A %d times and run B %d times; %d kills landed while a temporary folder existed",
          kKills, sawA_, sawB_, midWrite_);
    QVERIFY(sawA_ > 0 && sawB_ > 0);
    QVERIFY(midWrite_ > 0);  // the kills did land inside saves
  }
};

QTEST_GUILESS_MAIN(TestSaveKills)
#include "test_save_kills.moc"
