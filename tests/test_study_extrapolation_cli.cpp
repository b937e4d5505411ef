// attnlab-cli study extrapolation --quick: every encoding on both tasks at each multiple in
// results.csv, the report's tables, its comparison with the paper and a chart per task; bad seeds.
#include <QtTest>

#include "cli_support.h"

class TestStudyExtrapolationCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("r6");
    const Run run = runCli({"study", "extrapolation", "--quick", "--seeds", "2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QFile csv(out + "/results.csv");
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.first(), QString("task,encoding,seed,multiple,length,loss,accuracy"));
    QCOMPARE(lines.size(), 1 + 2 /*tasks*/ * 6 /*encodings*/ * 2 /*multiples*/);
    QMap<QString, int> trained;  // task/encoding -> length at 1x
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 7);
      QCOMPARE(f[2], QString("2"));
      const QString run = f[0] + "/" + f[1];
      if (f[3] == "1") trained[run] = f[4].toInt();
      else QCOMPARE(f[4].toInt(), 2 * trained.value(run));  // the 2x row follows its 1x row: twice as long
      const double accuracy = f[6].toDouble();
      QVERIFY(accuracy >= 0 && accuracy <= 1);
    }
    QCOMPARE(trained.size(), 12);
    QFile md(out + "/report.md");
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    for (const char* encoding : {"rope", "alibi", "alibi_log", "accumulated (learned)", "accumulated (random)", "none"})
      QVERIFY2(report.contains(QString("| %1 |").arg(encoding)), encoding);
    QVERIFY(report.contains("## Against the paper"));
    for (const char* task : {"passkey", "induction"}) {
      QVERIFY(report.contains(QString("ALiBi is length-stable (%1)").arg(task)));
      QVERIFY(QFileInfo(out + "/charts/" + task + ".png").size() > 1000);
    }
  }

  void badSeedsSayWhy() {
    QTemporaryDir tmp;
    const Run run = runCli({"study", "extrapolation", "--quick", "--seeds", "1,x", "--out", tmp.filePath("r6")});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--seeds '1,x' is not a list of whole numbers"), run.err.constData());
  }
};

QTEST_MAIN(TestStudyExtrapolationCli)
#include "test_study_extrapolation_cli.moc"
