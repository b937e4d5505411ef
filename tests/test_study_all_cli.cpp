// attnlab-cli study all --quick: each chosen study in its own folder with its findings.csv, and an
// index whose every row is a study's finding verbatim, linked; its verdict counts add up; --resume
// keeps finished studies; a broken findings.csv is named while the other studies stay indexed;
// an unknown study name is refused.
#include <QtTest>

#include "cli_support.h"
#include "study_cli_support.h"

namespace {

QList<QStringList> readCsv(const QString& path) {
  QList<QStringList> rows;
  for (const QString& line : csvLines(path)) rows << csvFields(line);
  return rows;
}

}  // namespace

class TestStudyAllCli : public QObject {
  Q_OBJECT

 private slots:
  void indexGathersEveryFinding() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("all");
    const Run run = runCli({"study", "all", "--quick", "--studies", "sinks,extrapolation", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QList<QStringList> index = readCsv(out + "/findings.csv");
    QCOMPARE(index.value(0), QStringList({"study", "finding", "paper", "measured", "verdict"}));
    int rows = 0, counts[3] = {0, 0, 0};
    const QStringList verdicts = {"agrees", "partly", "does not"};
    const QString report = readText(out + "/report.md");
    for (const QString study : {"sinks", "extrapolation"}) {
      const QList<QStringList> own = readCsv(out + "/" + study + "/findings.csv");
      QCOMPARE(own.value(0), QStringList({"finding", "paper", "measured", "verdict"}));
      QVERIFY2(own.size() > 1, qPrintable(study));
      for (const QStringList& f : own.mid(1)) {
        QCOMPARE(f.size(), 4);
        QVERIFY2(verdicts.contains(f[3]), qPrintable(f.join(" / ")));
        QVERIFY2(index.contains(QStringList{study} + f), qPrintable(study + ": " + f.join(" / ")));
        QVERIFY2(report.contains(QString("| [%1](%1/report.md) | %2 | %3 | %4 | %5 |").arg(study, f[0], f[1], f[2], f[3])), qPrintable(f[0]));
        QVERIFY(readText(out + "/" + study + "/report.md").contains(QString("| %1 | %2 | %3 | %4 |").arg(f[0], f[1], f[2], f[3])));
        ++counts[verdicts.indexOf(f[3])];
        ++rows;
      }
    }
    QCOMPARE(index.size(), 1 + rows);
    QVERIFY2(report.contains(QString("- Verdicts: %1 agree, %2 partly, %3 do not").arg(counts[0]).arg(counts[1]).arg(counts[2])),
             qPrintable(report));
    QVERIFY(report.contains("| [sinks](sinks/report.md) | R8:"));

    // The sinks study's claim about the learnable sink: its measured share, recomputed from results.csv
    // (per seed the mean over layers, then the mean over seeds), starts the measured text.
    QMap<QString, QList<double>> perSeed;
    for (const QStringList& f : readCsv(out + "/sinks/results.csv").mid(1))
      if (f[0] == "learnable sink") perSeed[f[3]] << f[5].toDouble();
    QCOMPARE(perSeed.size(), 2);
    double mean = 0;
    for (const QList<double>& layers : perSeed) mean += std::accumulate(layers.begin(), layers.end(), 0.0) / layers.size() / 2;
    const QString sinkRow = report.section("| learnable sink lowers the first token's share |", 1, 1).section('\n', 0, 0);
    QVERIFY2(sinkRow.contains(QString("| %1 [").arg(mean, 0, 'f', 3)), qPrintable(QString::number(mean) + " in" + sinkRow));

    // --resume keeps both studies (no training: their folders hold findings.csv) and rebuilds the same index.
    const Run again = runCli({"study", "all", "--quick", "--studies", "sinks,extrapolation", "--resume", "--out", out, "--quiet"});
    QVERIFY2(again.exitCode == 0, again.err.constData());
    QCOMPARE(readCsv(out + "/findings.csv"), index);
    // a kept study's run time is the one its own report states, with its thread count
    const QRegularExpression kept(R"(\| kept from an earlier run \| [0-9hms]+ with (1 thread|\d+ threads) \|)");
    QVERIFY2(readText(out + "/report.md").count(kept) == 2, qPrintable(readText(out + "/report.md")));

    // A broken findings.csv is named in the index and the exit code, and the other study stays indexed.
    QFile broken(out + "/sinks/findings.csv");
    QVERIFY(broken.open(QIODevice::WriteOnly | QIODevice::Truncate));
    broken.write("finding,paper,measured,verdict\na,b,c,maybe\n");
    broken.close();
    const Run damaged = runCli({"study", "all", "--quick", "--studies", "sinks,extrapolation", "--resume", "--out", out, "--quiet"});
    QCOMPARE(damaged.exitCode, 1);
    QVERIFY2(damaged.err.contains("verdict 'maybe' is not agrees, partly or does not"), damaged.err.constData());
    const QString afterDamage = readText(out + "/report.md");
    QVERIFY(afterDamage.contains("verdict 'maybe'"));
    QVERIFY(afterDamage.contains("| [extrapolation](extrapolation/report.md) | accumulated rotation"));
  }

  void unknownStudyIsRefused() {
    QTemporaryDir tmp;
    const Run run = runCli({"study", "all", "--quick", "--studies", "sinks,nope", "--out", tmp.filePath("x")});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--studies: no study 'nope' (known: live-cache,") || run.err.contains("no study 'nope'"), run.err.constData());
  }
};

QTEST_MAIN(TestStudyAllCli)
#include "test_study_all_cli.moc"
