#pragma once
// Runs the built attnlab-cli (next to the test binary) and collects its exit code and output.
#include <QtTest>

struct Run {
  int exitCode = -1;
  QByteArray out, err;
};

inline QString cliPath() { return QCoreApplication::applicationDirPath() + "/attnlab-cli"; }

inline Run runCli(const QStringList& arguments) {
  QProcess process;
  process.start(cliPath(), arguments);
  Run run;
  if (!process.waitForFinished(10 * 60 * 1000) || process.exitStatus() != QProcess::NormalExit) {
    process.kill();
    run.err = "attnlab-cli crashed or timed out: " + process.readAllStandardError();
    return run;
  }
  run.exitCode = process.exitCode();
  run.out = process.readAllStandardOutput();
  run.err = process.readAllStandardError();
  return run;
}
