// attnlab-cli study low-precision --quick: every model, seed and length in results.csv, every layer,
// head and distance bucket in zero_share.csv (its visible counts are the causal cells, its far fp16
// weights exactly 0 where fp32 and bf16 keep them), one report cell and one finding recomputed from
// the CSV (mean and 95% interval over the 2 seeds), valid verdicts, the charts; bad flags say why.
#include <QtTest>

#include <cmath>

#include "cli_support.h"
#include "study_cli_support.h"

namespace {

constexpr int kArms = 6 /*5 trained, 1 evaluated at another precision*/, kSeeds = 2, kLengths = 4, kHeads = 4, kTrainLength = 24, kBucket = 3;

}  // namespace

class TestStudyLowPrecisionCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("lp");
    const Run run = runCli({"study", "low-precision", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());

    // results.csv: model x seed x length; value[model][column][multiple] per seed in order
    const QStringList results = csvLines(out + "/results.csv");
    QCOMPARE(results.value(0), QString("model,positional,precision,seed,multiple,length,loss,accuracy,exact_match,visible,zeros,zero_share,train_seconds"));
    QCOMPARE(results.size(), 1 + kArms * kSeeds * kLengths);
    QMap<QString, QList<double>> column;  // "model|multiple|column" -> per seed
    QMap<QString, long> visibleOf;       // "model|seed|multiple" -> visible
    for (const QString& line : results.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 13);
      QCOMPARE(f[5].toInt(), kTrainLength * f[4].toInt());
      const double accuracy = f[7].toDouble(), share = f[11].toDouble();
      QVERIFY2(accuracy >= 0 && accuracy <= 1 && share >= 0 && share <= 1, qPrintable(line));
      QVERIFY2(std::abs(share - f[10].toDouble() / f[9].toDouble()) < 1e-5, qPrintable(line));
      column[f[0] + "|" + f[4] + "|accuracy"] << accuracy;
      column[f[0] + "|" + f[4] + "|zero_share"] << share;
      visibleOf[f[0] + "|" + f[3] + "|" + f[4]] = f[9].toLong();
    }

    // zero_share.csv: every layer (1), head and bucket; visible = 2 sequences x the causal cells at each distance
    const QStringList zeros = csvLines(out + "/zero_share.csv");
    QCOMPARE(zeros.value(0), QString("model,positional,precision,seed,multiple,length,layer,head,slope,distance_from,distance_to,visible,zeros,zero_share"));
    int bucketsPerHead = 0;
    for (int m : {1, 2, 4, 8}) bucketsPerHead += (kTrainLength * m - 1) / kBucket + 1;
    QCOMPARE(zeros.size(), 1 + kArms * kSeeds * kHeads * bucketsPerHead);
    QMap<QString, long> visibleSum;
    long farFp16Zeros = 0, farFp16Visible = 0, farOtherZeros = 0;
    for (const QString& line : zeros.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 14);
      const int length = f[5].toInt(), from = f[9].toInt(), to = f[10].toInt();
      long cells = 0;
      for (int d = from; d <= to && d < length; ++d) cells += length - d;
      QCOMPARE(f[11].toLong(), 2 * cells);
      QVERIFY(f[12].toLong() <= f[11].toLong());
      visibleSum[f[0] + "|" + f[3] + "|" + f[4]] += f[11].toLong();
      // head 0 (slope 1/4) at distances >= 180: a penalty >= 45, far below fp16's 2^-25, far above fp32's and bf16's floor
      if (f[4] == "8" && f[7] == "0" && from >= 180 && f[1] == "alibi") {
        if (f[2] == "fp16") farFp16Zeros += f[12].toLong(), farFp16Visible += f[11].toLong();
        else farOtherZeros += f[12].toLong();
      }
    }
    QCOMPARE(visibleSum, visibleOf);
    QVERIFY(farFp16Visible > 0);
    QCOMPARE(farFp16Zeros, farFp16Visible);
    QCOMPARE(farOtherZeros, 0L);

    // report.md: the zero-share table's 8x cell of alibi fp16, recomputed from results.csv
    QFile md(out + "/report.md");
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    const QList<double> share8 = column.value("alibi fp16|8|zero_share");
    QCOMPARE(share8.size(), 2);
    const QString table = report.section("## Share of visible weights exactly 0", 1, 1);
    const QString row = table.section("| alibi fp16 |", 1, 1).section('\n', 0, 0);
    QVERIFY2(row.split('|').value(3).trimmed() == twoSeedCell(share8[0], share8[1]),
             qPrintable("expected the 8x cell " + twoSeedCell(share8[0], share8[1]) + " in the row" + row));
    for (const char* part : {"- Command: `attnlab-cli study low-precision --quick --seeds 1,2 --out", "- Seeds: 1, 2", "- Machine: ",
                             "**trained at its precision**", "| model | 1x (24) | 2x (48) | 4x (96) | 8x (192) |", "## Against the paper",
                             "| finding | the paper says | this run measured | verdict |", "the numbers mean nothing"})
      QVERIFY2(report.contains(part), part);

    // findings.csv: the header, a valid verdict per claim, and the retrieval claim's text from results.csv
    const QStringList findings = csvLines(out + "/findings.csv");
    QCOMPARE(findings.value(0), QString("finding,paper,measured,verdict"));
    QCOMPARE(findings.size(), 1 + 6);
    QString retrieval;
    for (const QString& line : findings.mid(1)) {
      const QStringList f = csvFields(line);
      QCOMPARE(f.size(), 4);
      QVERIFY2(QStringList({"agrees", "partly", "does not"}).contains(f[3]), qPrintable(line));
      QVERIFY2(report.contains("| " + f[0] + " |"), qPrintable(f[0]));
      if (f[0] == "fp16 impairs retrieval") retrieval = f[2];
    }
    const QList<double> a32 = column.value("alibi fp32|1|accuracy"), a16 = column.value("alibi fp16|1|accuracy");
    const QString expected = "passkey accuracy at the training length: alibi fp32 " + twoSeedCell(a32[0], a32[1]) + ", alibi fp16 " +
                             twoSeedCell(a16[0], a16[1]) + "; paired difference " + twoSeedCell(a32[0] - a16[0], a32[1] - a16[1], -1, 1);
    QCOMPARE(retrieval, expected);

    for (const char* chart : {"passkey_accuracy", "zero_share_alibi_fp32", "zero_share_alibi_bf16", "zero_share_alibi_fp16",
                              "zero_share_alibi_log_fp16", "zero_share_alibi_log_fp32", "zero_share_alibi_fp16_fp32_trained"})
      QVERIFY2(QFileInfo(out + "/charts/" + chart + ".png").size() > 1000, chart);
  }

  void badFlagsSayWhy() {
    QTemporaryDir tmp;
    for (const QStringList& flags : {QStringList{"--seeds", "1,x"}, QStringList{"--heads", "3"}, QStringList{"--train-length", "5"}}) {
      const Run run = runCli(QStringList{"study", "low-precision", "--quick", "--out", tmp.filePath("lp")} + flags);
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.trimmed().count('\n') == 0 && run.err.startsWith("attnlab-cli: "), run.err.constData());
    }
    const Run heads = runCli({"study", "low-precision", "--quick", "--heads", "3", "--out", tmp.filePath("lp")});
    QVERIFY2(heads.err.contains("--d-model 16 must be a multiple of --heads 3"), heads.err.constData());
  }
};

QTEST_MAIN(TestStudyLowPrecisionCli)
#include "test_study_low_precision_cli.moc"
