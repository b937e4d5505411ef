#pragma once
// Runs a built program (attnlab-cli next to the test binary, or the app) and collects its exit
// code and output.
#include <QtTest>

struct Run {
  int exitCode = -1;
  QByteArray out, err;
};

inline QString cliPath() { return QCoreApplication::applicationDirPath() + "/attnlab-cli"; }

inline Run runProgram(const QString& program, const QStringList& arguments,
                      const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment()) {
  QProcess process;
  process.setProcessEnvironment(environment);
  process.start(program, arguments);
  Run run;
  if (!process.waitForFinished(10 * 60 * 1000) || process.exitStatus() != QProcess::NormalExit) {
    process.kill();
    process.waitForFinished();
    run.err = program.toUtf8() + " crashed or timed out: " + process.readAllStandardError();
    return run;
  }
  run.exitCode = process.exitCode();
  run.out = process.readAllStandardOutput();
  run.err = process.readAllStandardError();
  return run;
}

inline Run runCli(const QStringList& arguments) { return runProgram(cliPath(), arguments); }
