// attnlab-cli study live-cache --quick: every model and seed in results.csv and sweep.csv, table cells
// of report.md recomputed from the CSV (mean and 95% interval over the seeds), findings.csv with valid
// verdicts and a measured text that follows from the CSV, one chart per model, and bad flags refused.
#include <QtTest>

#include <cmath>

#include "cli_support.h"

namespace {

constexpr double kT975OneDegree = 12.706;  // two seeds

QStringList readLines(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
}

// One CSV line split into fields, with "quoted, fields" and "" for a quote.
QStringList csvFields(const QString& line) {
  QStringList fields{QString()};
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields << QString();
    else fields.back() += c;
  }
  return fields;
}

struct Interval {
  double mean, low, high;
};
Interval overTwoSeeds(double a, double b) {
  const double mean = (a + b) / 2, half = kT975OneDegree * std::abs(a - b) / std::sqrt(2.0) / std::sqrt(2.0);
  return {mean, mean - half, mean + half};
}
QString pplText(const Interval& i) { return QString("%1 [%2, %3]").arg(i.mean, 0, 'f', 3).arg(i.low, 0, 'f', 3).arg(i.high, 0, 'f', 3); }
QString changeText(const Interval& i) {
  auto one = [](double v) { return (v >= 0 ? "+" : "") + QString::number(100 * v, 'f', 2) + "%"; };
  return one(i.mean) + " [" + one(i.low) + ", " + one(i.high) + "]";
}

}  // namespace

class TestStudyLiveCacheCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("live-cache");
    const Run run = runCli({"study", "live-cache", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY(run.err.isEmpty());

    const QStringList lines = readLines(out + "/results.csv");
    QCOMPARE(lines.value(0), QString("attention,positional,gate,seed,train_loss,dense_ppl,hard_ppl,delta_vs_dense,live_share,"
                                     "h2o_matched_ppl,keydiff_matched_ppl,window_matched_ppl,snapkv_matched_ppl,seconds"));
    QCOMPARE(lines.size(), 1 + 8 /*models*/ * 2 /*seeds*/);
    QMap<QString, QList<double>> dense, snapkv;  // "sigmoid/alibi" -> per seed, in seed order
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 14);
      QCOMPARE(f[6].isEmpty(), f[2] == "none");  // hard eviction only for gated models
      const QString model = f[0] + (f[2] == "learned" ? "+gate/" : "/") + f[1];
      dense[model] << f[5].toDouble();
      snapkv[model] << f[12].toDouble();
      QVERIFY2(f[5].toDouble() > 1 && f[12].toDouble() > 1, qPrintable(line));
    }
    QCOMPARE(dense.size(), 8);
    QCOMPARE(readLines(out + "/sweep.csv").size(), 1 + 2 /*seeds*/ * 4 /*pairs*/ * (3 * 2 /*gated*/ + 2 * 2 /*ungated*/));

    // two cells of the table, recomputed from the per-seed rows
    QFile md(out + "/report.md");
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    const QStringList row = report.section("| sigmoid/alibi |", 1, 1).section('\n', 0, 0).split('|');
    QCOMPARE(row.value(0).trimmed(), pplText(overTwoSeeds(dense["sigmoid/alibi"][0], dense["sigmoid/alibi"][1])));
    QCOMPARE(row.value(7).trimmed(), pplText(overTwoSeeds(snapkv["sigmoid/alibi"][0], snapkv["sigmoid/alibi"][1])));
    for (const char* part : {"| model | dense PPL | PPL, hard eviction | delta vs own dense | live-cache share | h2o PPL (matched) | "
                             "keydiff PPL (matched) | window PPL (matched) | snapkv PPL (matched) |",
                             "- Seeds: 1, 2", "- Command: `attnlab-cli study live-cache --quick --seeds 1,2 --out", "- Machine: ",
                             "the numbers mean nothing", "## Against the paper",
                             "| finding | the paper says | this run measured | verdict |", "(twin's)"})
      QVERIFY2(report.contains(part), part);

    // findings.csv: the four claims, valid verdicts, and claim 1's measurement as the CSV gives it
    const QStringList findings = readLines(out + "/findings.csv");
    QCOMPARE(findings.value(0), QString("finding,paper,measured,verdict"));
    QCOMPARE(findings.size(), 1 + 4);
    for (const QString& line : findings.mid(1)) {
      const QStringList f = csvFields(line);
      QCOMPARE(f.size(), 4);
      QVERIFY2(QStringList({"agrees", "partly", "does not"}).contains(f[3]), qPrintable(line));
      QVERIFY2(report.contains("| " + f[0] + " |"), qPrintable(f[0]));
    }
    QString measured = "dense PPL of sigmoid over softmax, ungated, per seed: ";
    int above = 0, below = 0;
    for (const auto& [pos, name] : {std::pair<QString, QString>{"rope", "RoPE"}, {"alibi", "ALiBi"}}) {
      const QList<double>&sig = dense["sigmoid/" + pos], &soft = dense["softmax/" + pos];
      const Interval worse = overTwoSeeds(sig[0] / soft[0] - 1, sig[1] / soft[1] - 1);
      measured += (pos == "rope" ? "" : "; ") + name + ": " + changeText(worse);
      above += worse.low > 0, below += worse.high < 0;
    }
    const QStringList first = csvFields(findings[1]);
    QCOMPARE(first[2], measured);
    QCOMPARE(first[3], QString(above == 2 ? "agrees" : below > 0 && above == 0 ? "does not" : "partly"));

    const QStringList charts = QDir(out + "/charts").entryList({"*.png"});
    QCOMPARE(charts.size(), 8);
    for (const QString& chart : charts) {
      QVERIFY2(report.contains("(charts/" + chart + ")"), qPrintable(chart));
      QVERIFY(QFileInfo(out + "/charts/" + chart).size() > 5000);
    }
  }

  void badFlagsAreRefused_data() {
    QTest::addColumn<QStringList>("flags");
    QTest::addColumn<QString>("message");
    QTest::newRow("budget") << QStringList{"--budgets", "150%"} << "--budgets takes shares of the positions seen";
    QTest::newRow("policy") << QStringList{"--policies", "window,nope"} << "sweep policy 'nope' is not an eviction policy";
    QTest::newRow("seeds") << QStringList{"--seeds", "1,x"} << "seed";
    QTest::newRow("width") << QStringList{"--d-model", "0"} << "--d-model";
    QTest::newRow("threshold") << QStringList{"--threshold", "2"} << "--threshold";
  }
  void badFlagsAreRefused() {
    QFETCH(QStringList, flags);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    const Run run = runCli(QStringList{"study", "live-cache", "--quick", "--out", tmp.filePath("x"), "--quiet"} + flags);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.startsWith("attnlab-cli: ") && run.err.contains(message.toUtf8()), run.err.constData());
    QCOMPARE(run.err.count('\n'), 1);
  }
};

QTEST_MAIN(TestStudyLiveCacheCli)
#include "test_study_live_cache_cli.moc"
