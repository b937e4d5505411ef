// attnlab-cli study live-cache --quick: every model and seed in results.csv and sweep.csv, table cells
// of report.md recomputed from the CSV (mean and 95% interval over the seeds), findings.csv with valid
// verdicts and a measured text that follows from the CSV, one chart per model, and bad flags refused.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>

#include "cli_support.h"
#include "study_cli_support.h"

namespace {

constexpr double kT975OneDegree = 12.706;  // two seeds

struct Interval {
  double mean, low, high;
};
// A share's interval is cut at [0, 1], as the report cuts it.
Interval overTwoSeeds(double a, double b, double lowest = -INFINITY, double highest = INFINITY) {
  const double mean = (a + b) / 2, half = kT975OneDegree * std::abs(a - b) / std::sqrt(2.0) / std::sqrt(2.0);
  return {mean, std::max(lowest, mean - half), std::min(highest, mean + half)};
}
QString pplText(const Interval& i) { return QString("%1 [%2, %3]").arg(i.mean, 0, 'f', 3).arg(i.low, 0, 'f', 3).arg(i.high, 0, 'f', 3); }
QString percentText(const Interval& i, bool sign, int decimals) {
  auto one = [&](double v) {
    QString text = QString::number(100 * v, 'f', decimals);
    if (text.toDouble() == 0) text.remove('-');  // the report writes a rounded zero without its sign
    return (sign && !text.startsWith('-') ? "+" : "") + text + "%";
  };
  return one(i.mean) + " [" + one(i.low) + ", " + one(i.high) + "]";
}
QString changeText(const Interval& i) { return percentText(i, true, 2); }

// The report's rule: a case supports "value < bound" when its interval lies below the bound, contradicts it above.
enum Evidence { supports, contradicts, undecided };
Evidence judge(const Interval& i, double bound, bool claimBelow) {
  if (claimBelow ? i.high < bound : i.low > bound) return supports;
  if (claimBelow ? i.low > bound : i.high < bound) return contradicts;
  return undecided;
}
QString everyCase(const QList<Evidence>& cases) {
  if (cases.count(supports) == cases.size()) return "agrees";
  return cases.count(contradicts) > 0 && cases.count(supports) == 0 ? "does not" : "partly";
}
QString someCase(const QList<Evidence>& cases) {
  if (cases.count(supports) > 0) return "agrees";
  return cases.count(contradicts) == cases.size() ? "does not" : "partly";
}

// results.csv's rows of one model ("sigmoid+gate/rope"), in seed order, as numbers by column.
using Rows = QMap<QString, QList<QStringList>>;
Interval over(const Rows& rows, const QString& model, const std::function<double(const QStringList&)>& value, bool share = false) {
  const QList<QStringList>& r = rows[model];
  return share ? overTwoSeeds(value(r.value(0)), value(r.value(1)), 0, 1) : overTwoSeeds(value(r.value(0)), value(r.value(1)));
}

}  // namespace

class TestStudyLiveCacheCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("live-cache");
    // a threshold near the untrained gate's g (about 0.88) makes the quick run evict part of the cache
    const Run run = runCli({"study", "live-cache", "--quick", "--threshold", "0.88", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY(run.err.isEmpty());

    const QStringList lines = csvLines(out + "/results.csv");
    QCOMPARE(lines.value(0), QString("attention,positional,gate,seed,train_loss,dense_ppl,hard_ppl,delta_vs_dense,live_share,"
                                     "h2o_matched_ppl,keydiff_matched_ppl,window_matched_ppl,snapkv_matched_ppl,seconds"));
    QCOMPARE(lines.size(), 1 + 8 /*models*/ * 2 /*seeds*/);
    Rows rows;  // "sigmoid/alibi" -> its rows, in seed order
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 14);
      QCOMPARE(f[6].isEmpty(), f[2] == "none");  // hard eviction only for gated models
      QVERIFY2(f[5].toDouble() > 1 && f[12].toDouble() > 1, qPrintable(line));
      rows[f[0] + (f[2] == "learned" ? "+gate/" : "/") + f[1]] << f;
    }
    QCOMPARE(rows.size(), 8);
    QVERIFY2(rows["sigmoid+gate/rope"][0][8].toDouble() < 1, "the gate evicts nothing: the findings below would be degenerate");
    QCOMPARE(csvLines(out + "/sweep.csv").size(), 1 + 2 /*seeds*/ * 4 /*pairs*/ * (3 * 2 /*gated*/ + 2 * 2 /*ungated*/));

    // cells of the table, recomputed from the per-seed rows
    QFile md(out + "/report.md");
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString report = QString::fromUtf8(md.readAll());
    auto column = [](int i) { return [i](const QStringList& f) { return f[i].toDouble(); }; };
    const QStringList row = report.section("| sigmoid/alibi |", 1, 1).section('\n', 0, 0).split('|');
    QCOMPARE(row.value(0).trimmed(), pplText(over(rows, "sigmoid/alibi", column(5))));
    QCOMPARE(row.value(7).trimmed(), pplText(over(rows, "sigmoid/alibi", column(12))));  // snapkv, matched
    const QStringList gated = report.section("| softmax+gate/rope |", 1, 1).section('\n', 0, 0).split('|');
    QCOMPARE(gated.value(2).trimmed(), changeText(over(rows, "softmax+gate/rope", column(7))));
    for (const char* part : {"| model | dense PPL | PPL, hard eviction | delta vs own dense | live-cache share | h2o PPL (matched) | "
                             "keydiff PPL (matched) | window PPL (matched) | snapkv PPL (matched) |",
                             "- Seeds: 1, 2", "- Command: `attnlab-cli study live-cache --quick --threshold 0.88 --seeds 1,2 --out",
                             "- Machine: ", "the numbers mean nothing", "## Against the paper",
                             "| finding | the paper says | this run measured | verdict |", "(twin's)"})
      QVERIFY2(report.contains(part), part);

    // findings.csv: the four claims, each measured text and verdict as the CSV gives them
    const QStringList findings = csvLines(out + "/findings.csv");
    QCOMPARE(findings.value(0), QString("finding,paper,measured,verdict"));
    QCOMPARE(findings.size(), 1 + 4);
    QList<QStringList> claims;
    for (const QString& line : findings.mid(1)) {
      const QStringList f = csvFields(line);
      QCOMPARE(f.size(), 4);
      QVERIFY2(QStringList({"agrees", "partly", "does not"}).contains(f[3]), qPrintable(line));
      QVERIFY2(report.contains("| " + f[0] + " |"), qPrintable(f[0]));
      claims << f;
    }
    QString dense = "dense PPL of sigmoid over softmax, ungated, per seed: ",
            eviction = "sigmoid+gate, hard-eviction PPL over its own dense PPL (negligible: at most +1%, with under 90% of the cache live): ";
    QMap<QString, QString> matched = {{"sigmoid", "sigmoid+gate, hard-eviction PPL over the policy's at the same live counts: "},
                                      {"softmax", "softmax+gate, hard-eviction PPL over the policy's at the same live counts: "}};
    QList<Evidence> denseCases, evictionCases;
    QMap<QString, QList<Evidence>> matchedCases;
    for (const auto& [pos, name] : {std::pair<QString, QString>{"rope", "RoPE"}, {"alibi", "ALiBi"}}) {
      const QString sep = pos == "rope" ? "" : "; ";
      const QList<QStringList>&sig = rows["sigmoid/" + pos], &soft = rows["softmax/" + pos];
      const Interval worse = overTwoSeeds(sig[0][5].toDouble() / soft[0][5].toDouble() - 1, sig[1][5].toDouble() / soft[1][5].toDouble() - 1);
      dense += sep + name + ": " + changeText(worse);
      denseCases << judge(worse, 0, false);
      const Interval delta = over(rows, "sigmoid+gate/" + pos, column(7)), live = over(rows, "sigmoid+gate/" + pos, column(8), true);
      eviction += sep + name + ": " + changeText(delta) + " at " + percentText(live, false, 1) + " live";
      const Evidence e = judge(delta, 0.01, true);
      evictionCases << (e == supports && !(live.high < 0.9) ? undecided : e);
      for (const QString& attention : {"sigmoid", "softmax"})
        for (const auto& [col, policy] : {std::pair<int, QString>{9, "H2O"}, {10, "KeyDiff"}}) {
          const Interval x = over(rows, attention + "+gate/" + pos, [col = col](const QStringList& f) { return f[6].toDouble() / f[col].toDouble() - 1; });
          matched[attention] += (pos == "rope" && policy == "H2O" ? "" : "; ") + name + " vs " + policy + ": " + changeText(x);
          matchedCases[attention] << judge(x, 0, attention == "sigmoid");
        }
    }
    QCOMPARE(claims[0][2], dense);
    QCOMPARE(claims[0][3], everyCase(denseCases));
    QCOMPARE(claims[1][2], eviction);
    QCOMPARE(claims[1][3], everyCase(evictionCases));
    QCOMPARE(claims[2][2], matched["sigmoid"]);
    QCOMPARE(claims[2][3], everyCase(matchedCases["sigmoid"]));
    QCOMPARE(claims[3][2], matched["softmax"]);
    QCOMPARE(claims[3][3], someCase(matchedCases["softmax"]));

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
