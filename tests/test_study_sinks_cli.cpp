// attnlab-cli study sinks --quick: every model, seed and layer in results.csv, the report's table
// (one cell recomputed from the CSV: mean and 95% interval over seeds), its comparison with the
// seeds, the learnable sink's share, and the chart.
#include <QtTest>

#include <cmath>

#include "cli_support.h"

class TestStudySinksCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("sinks");
    const Run run = runCli({"study", "sinks", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QFile csv(out + "/results.csv");
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.value(0), QString("model,attention,output_gate,seed,layer,first_token_share,learned_sink_share,output_gate_mean,val_loss"));
    QCOMPARE(lines.size(), 1 + 4 /*models*/ * 2 /*seeds*/ * 2 /*layers*/);
    QList<double> headwiseLayer1;
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 9);
      const double first = f[5].toDouble(), sink = f[6].toDouble();
      QVERIFY2(first > 0 && first < 1, qPrintable(line));
      if (f[1] == "softmax") QVERIFY2(std::abs(sink) < 1e-4, qPrintable(line));  // softmax rows sum to 1
      else QVERIFY2(sink > 0 && sink < 1, qPrintable(line));                     // the learnable sink takes a share
      QCOMPARE(f[7].isEmpty(), f[2] == "none");
      if (f[2] == "headwise" && f[4] == "1") headwiseLayer1 << first;
    }
    QCOMPARE(headwiseLayer1.size(), 2);
    const double mean = (headwiseLayer1[0] + headwiseLayer1[1]) / 2;
    const double half = 12.706 * std::abs(headwiseLayer1[0] - headwiseLayer1[1]) / std::sqrt(2.0) / std::sqrt(2.0);
    const QString cell = QString("%1 [%2, %3]").arg(mean, 0, 'f', 3).arg(mean - half, 0, 'f', 3).arg(mean + half, 0, 'f', 3);
    QFile md(out + "/report.md");
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    const QString row = report.section("| softmax + head-wise gate |", 1, 1).section('\n', 0, 0);
    QVERIFY2(row.split('|').value(2).trimmed() == cell, qPrintable("expected layer 1's cell " + cell + " in the row" + row));
    for (const char* part : {"| model | val loss | layer 0 | layer 1 | learned sink's share | output gate mean |", "| softmax |",
                             "| softmax + element-wise gate |", "| learnable sink |", "## Against the paper", "- Seeds: 1, 2",
                             "- Command: `attnlab-cli study sinks --quick --seeds 1,2 --out", "Uniform attention would give"})
      QVERIFY2(report.contains(part), part);
    QVERIFY(QFileInfo(out + "/charts/sink_by_layer.png").size() > 1000);
  }
};

QTEST_MAIN(TestStudySinksCli)
#include "test_study_sinks_cli.moc"
