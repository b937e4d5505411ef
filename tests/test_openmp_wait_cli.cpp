// The programs start again with OpenMP's passive wait policy unless the user chose one
// (core/openmp_wait.h). libgomp itself reports what it runs with: OMP_DISPLAY_ENV=verbose prints
// its settings, once for each time the library loads, so a restart shows two reports and the
// last one is what the program ran with.
#include <QtTest>

#include "cli_support.h"

namespace {

struct Reports {
  int count = 0;
  QString lastWaitPolicy, lastSpinCount;
};

// The settings libgomp printed on stderr, as "  GOMP_SPINCOUNT = '0'" lines.
Reports readReports(const QByteArray& err) {
  Reports r;
  const QRegularExpression setting("^\\s*(OMP_WAIT_POLICY|GOMP_SPINCOUNT) = '([^']*)'$");
  for (const QString& line : QString::fromUtf8(err).split('\n')) {
    if (line.contains("OPENMP DISPLAY ENVIRONMENT BEGIN")) ++r.count;
    const QRegularExpressionMatch m = setting.match(line);
    if (!m.hasMatch()) continue;
    (m.captured(1) == "GOMP_SPINCOUNT" ? r.lastSpinCount : r.lastWaitPolicy) = m.captured(2);
  }
  return r;
}

// Runs `program arguments` with OpenMP's report on and `set` (name -> value) in an environment
// that otherwise has no OpenMP wait setting.
Run runWith(const QString& program, const QStringList& arguments, const QMap<QString, QString>& set) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("OMP_WAIT_POLICY");
  env.remove("GOMP_SPINCOUNT");
  env.insert("OMP_DISPLAY_ENV", "verbose");
  env.insert("QT_QPA_PLATFORM", "offscreen");
  for (auto it = set.begin(); it != set.end(); ++it) env.insert(it.key(), it.value());
  return runProgram(program, arguments, env);
}

}  // namespace

class TestOpenMpWaitCli : public QObject {
  Q_OBJECT

 private slots:
  void withoutAChoiceTheCliRestartsPassive() {
    const Run run = runWith(cliPath(), {"list"}, {});
    QCOMPARE(run.exitCode, 0);
    const Reports r = readReports(run.err);
    QCOMPARE(r.count, 2);  // the first start, then the restart
    QCOMPARE(r.lastWaitPolicy, QString("PASSIVE"));
    QCOMPARE(r.lastSpinCount, QString("0"));  // threads sleep at once (libgomp's default: 300000 turns)
    // the restarted program does its work as before: the same listing as with the policy set by hand
    const Run byHand = runWith(cliPath(), {"list"}, {{"OMP_WAIT_POLICY", "PASSIVE"}});
    QCOMPARE(run.out, byHand.out);
    QCOMPARE(readReports(byHand.err).count, 1);
  }

  void aChoiceOfTheUsersIsKept() {
    const Reports active = readReports(runWith(cliPath(), {"list"}, {{"OMP_WAIT_POLICY", "ACTIVE"}}).err);
    QCOMPARE(active.count, 1);
    QCOMPARE(active.lastWaitPolicy, QString("ACTIVE"));
    const Reports spin = readReports(runWith(cliPath(), {"list"}, {{"GOMP_SPINCOUNT", "1000"}}).err);
    QCOMPARE(spin.count, 1);
    QCOMPARE(spin.lastSpinCount, QString("1000"));
  }

  void flagsAndExitCodesSurviveTheRestart() {
    const Run run = runWith(cliPath(), {"train", "--no-such-flag"}, {});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--no-such-flag"), run.err.constData());
    QCOMPARE(readReports(run.err).count, 2);
  }

  void theAppRestartsPassiveToo() {
    const QString app = QCoreApplication::applicationDirPath() + "/attnlab";
    if (!QFileInfo::exists(app)) QSKIP("no desktop app in this build (headless)");
    const Run run = runWith(app, {"--tours"}, {});  // lists the tours without a window
    QCOMPARE(run.exitCode, 0);
    const Reports r = readReports(run.err);
    QCOMPARE(r.count, 2);
    QCOMPARE(r.lastSpinCount, QString("0"));
  }
};

QTEST_GUILESS_MAIN(TestOpenMpWaitCli)
#include "test_openmp_wait_cli.moc"
