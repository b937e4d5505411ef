// attnlab-cli study projection-sharing --quick: every model and seed in results.csv with the bytes
// its KV cache held, one table cell and one finding recomputed from the CSV (mean and 95% interval
// over the 2 seeds), the findings table's verdicts, the frontier chart, and bad flags refused.
#include <QtTest>

#include <cmath>

#include "cli_support.h"

namespace {
// "m [lo, hi]" for two values, as the report writes a mean with its 95% t-interval (t_{0.975,1} = 12.706).
QString interval(double a, double b, int decimals) {
  const double mean = (a + b) / 2, half = 12.706 * std::abs(a - b) / std::sqrt(2.0) / std::sqrt(2.0);
  return QString("%1 [%2, %3]").arg(mean, 0, 'f', decimals).arg(mean - half, 0, 'f', decimals).arg(mean + half, 0, 'f', decimals);
}
}  // namespace

class TestStudyProjectionSharingCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("sharing");
    const Run run = runCli({"study", "projection-sharing", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QFile csv(out + "/results.csv");
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.value(0), QString("model,projection_sharing,n_heads,n_kv_heads,seed,params,kv_bytes_held,tokens_held,"
                                     "kv_bytes_per_token,tensors_cached,train_loss,val_loss,val_ppl,seconds"));
    QCOMPARE(lines.size(), 1 + 4 /*sharings*/ * 2 /*KV heads*/ * 2 /*seeds*/);
    QMap<QString, QList<double>> ppl;  // "sharing/kv" -> per seed, in seed order
    QMap<QString, double> bytes;
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 14);
      const QString key = f[1] + "/" + f[3];
      ppl[key] << f[12].toDouble();
      // --quick: d_model 16 over 4 heads of 4 floats, 1 layer; q_k=v and q=k=v hold the keys only
      const int tensors = (f[1] == "q_k=v" || f[1] == "q=k=v") ? 1 : 2;
      QCOMPARE(f[9].toInt(), tensors);
      QCOMPARE(f[8].toDouble(), double(tensors * f[3].toInt() * 4 * 4));
      QCOMPARE(f[6].toLongLong(), f[7].toLongLong() * tensors * f[3].toInt() * 4 * 4);
      bytes[key] = f[8].toDouble();
      QVERIFY2(f[12].toDouble() > 1, qPrintable(line));
    }
    QVERIFY(bytes["q=k_v/4"] == bytes["qkv/4"] && bytes["q_k=v/1"] * 8 == bytes["qkv/4"]);

    QFile md(out + "/report.md");
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    const QList<double> grouped = ppl["q_k=v/1"];
    const QString row = report.section("| q_k=v (1 KV head) |", 1, 1).section('\n', 0, 0);
    const QString cell = interval(grouped[0], grouped[1], 3);
    QVERIFY2(row.split('|').value(4).trimmed() == cell, qPrintable("expected the val PPL cell " + cell + " in the row" + row));
    for (const char* part : {"| model | parameters | tensors cached | KV bytes per token | cache against qkv | val PPL |", "| qkv (4 KV heads) |",
                             "| q=k=v (1 KV head) |", "## Against the paper", "| finding | the paper says | this run measured | verdict |",
                             "- Seeds: 1, 2", "- Command: `attnlab-cli study projection-sharing --quick --seeds 1,2 --out", "- Machine: ",
                             "the numbers mean nothing"})
      QVERIFY2(report.contains(part), part);
    QVERIFY(QFileInfo(out + "/charts/frontier.png").size() > 1000);
    QVERIFY(QFileInfo(out + "/charts/frontier_paired.png").size() > 1000);

    QFile findings(out + "/findings.csv");
    QVERIFY(findings.open(QIODevice::ReadOnly));
    const QStringList rows = QString::fromUtf8(findings.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.value(0), QString("finding,paper,measured,verdict"));
    QCOMPARE(rows.size(), 1 + 5);
    for (const QString& line : rows.mid(1)) {
      const QString verdict = line.section(',', -1);
      QVERIFY2(verdict == "agrees" || verdict == "partly" || verdict == "does not", qPrintable(line));
    }
    // the q_k=v cost, per seed (quoted: it holds a comma) against qkv, and the exact halving (both tensors -> the keys only)
    const QList<double> shared = ppl["q_k=v/4"], full = ppl["qkv/4"];
    const QString cost = "PPL " + interval(100 * (shared[0] / full[0] - 1), 100 * (shared[1] / full[1] - 1), 2) +
                         " % against qkv (mean [95% interval] over 2 seeds)";
    QVERIFY2(rows[2].startsWith("q_k=v costs little perplexity,") && rows[2].contains(",\"" + cost + "\","), qPrintable(rows[2] + "\nexpected " + cost));
    QVERIFY2(rows[1].startsWith("q_k=v halves the KV cache,") && rows[1].endsWith(",agrees"), qPrintable(rows[1]));
    QVERIFY2(rows[3].contains("87.5% less with 4 query heads per KV head") && rows[3].endsWith(",agrees"), qPrintable(rows[3]));
  }

  void badFlagsSayWhy() {
    QTemporaryDir tmp;
    for (const QStringList& flags : {QStringList{"--kv-heads", "3"}, QStringList{"--kv-heads", "4"}, QStringList{"--seeds", "1,x"},
                                     QStringList{"--d-model", "18"}, QStringList{"--steps", "0"}}) {
      QStringList arguments = {"study", "projection-sharing", "--quick", "--out", tmp.filePath("bad")};
      const Run run = runCli(arguments + flags);
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.trimmed().count('\n') == 0 && !run.err.trimmed().isEmpty(), run.err.constData());
    }
  }
};

QTEST_MAIN(TestStudyProjectionSharingCli)
#include "test_study_projection_sharing_cli.moc"
