// attnlab-cli study seed-checks --quick with 2 seeds: every model and seed in runs.csv, every head at
// every snapshot in spectra.csv, every order in resilience.csv; one cell of the spectra (R3) table and
// the head-drop (R7) share of findings.csv recomputed from the CSVs (mean and 95% t-interval over
// seeds, Wilson's interval for the share); the charts; and bad flags refused with one line.
#include <QtTest>

#include <cmath>

#include "cli_support.h"
#include "study_cli_support.h"

namespace {

QString percentText(double share) { return QString::number(100 * share, 'f', 1) + "%"; }

}  // namespace

class TestStudySeedChecksCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("seed-checks");
    const Run run = runCli({"study", "seed-checks", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QStringList models = {"induction-rope", "induction-learned", "induction-alibi", "recall-rope", "copy-learned", "sorting-rope",
                                "toy-language-learned"};

    const QStringList runs = csvLines(out + "/runs.csv");
    QCOMPARE(runs.value(0), QString("model,preset,positional,seed,d_model,layers,heads,steps,batch,accuracy,seconds"));
    QCOMPARE(runs.size(), 1 + 7 * 2);
    for (const QString& model : models) QCOMPARE(runs.filter(QRegularExpression("^" + model + ",")).size(), 2);

    // spectra.csv: 3 induction models x 2 seeds x 4 heads x 5 snapshots (steps 0, 3, .., 12)
    const QStringList spectra = csvLines(out + "/spectra.csv");
    QCOMPARE(spectra.value(0), QString("model,positional,seed,step,layer,head,previous_token,induction,entropy,sink,radius_over_null,"
                                       "imaginary_share,skew_energy_share,henrici,rope_rotational_share"));
    QCOMPARE(spectra.size(), 1 + 3 * 2 * 4 * 5);
    // Per seed, the strongest previous-token head of induction-rope at the last step, and its rotational share.
    QList<double> share;
    QStringList heads;
    for (const QString seed : {"1", "2"}) {
      double bestScore = -1, bestShare = 0;
      QString bestHead;
      for (const QString& line : spectra.mid(1)) {
        const QStringList f = line.split(',');
        QCOMPARE(f.size(), 15);
        if (f[0] != "induction-rope" || f[2] != seed || f[3] != "12") continue;
        if (f[6].toDouble() > bestScore) bestScore = f[6].toDouble(), bestShare = f[11].toDouble(), bestHead = f[4] + "." + f[5];
      }
      share << bestShare;
      heads << bestHead;
    }
    const QString cell = twoSeedCell(share[0], share[1]);
    const QString report = readText(out + "/report.md");
    const QStringList row = report.section("\n| induction-rope | ", 2, 2).section('\n', 0, 0).split(" | ");  // the second table's row
    QVERIFY2(row.value(1) == heads.join(", "), qPrintable(row.join('|')));
    QVERIFY2(row.value(4) == cell, qPrintable("expected the rotational share " + cell + " in " + row.join('|')));

    // resilience.csv: 7 models x 2 seeds x 3 orders; the share of cases where ascending is strictly best.
    const QStringList resilience = csvLines(out + "/resilience.csv");
    QCOMPARE(resilience.value(0), QString("model,seed,metric,order,resilience"));
    QCOMPARE(resilience.size(), 1 + 7 * 2 * 3);
    int best = 0;
    for (int i = 1; i < resilience.size(); i += 3) {
      const QStringList a = resilience[i].split(','), d = resilience[i + 1].split(','), r = resilience[i + 2].split(',');
      QVERIFY2(a[3] == "ascending" && d[3] == "descending" && r[3] == "random" && a[0] == r[0] && a[1] == r[1], qPrintable(resilience[i]));
      best += a[4].toDouble() > d[4].toDouble() && a[4].toDouble() > r[4].toDouble();
    }
    const double z = 1.959964, n = 14, p = best / n, shrink = 1 + z * z / n;
    const double centre = (p + z * z / (2 * n)) / shrink, half = z / shrink * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
    const QString shareText = QString("ascending the most resilient in %1 of 14 cases (model x seed): %2 [%3, %4] (Wilson 95%)")
                                  .arg(best).arg(percentText(p), percentText(std::max(0.0, centre - half)), percentText(std::min(1.0, centre + half)));

    const QStringList findings = csvLines(out + "/findings.csv");
    QCOMPARE(findings.value(0), QString("finding,paper,measured,verdict"));
    QCOMPARE(findings.size(), 1 + 6);
    bool sawShare = false, sawRotation = false;
    for (const QString& line : findings.mid(1)) {
      const QStringList f = csvFields(line);
      QCOMPARE(f.size(), 4);
      QVERIFY2(QStringList({"agrees", "partly", "does not"}).contains(f[3]), qPrintable(line));
      QVERIFY2(report.contains(f[2]), qPrintable("findings.csv's measured text is not in the report: " + f[2]));
      sawShare |= f[2].startsWith(shareText + "; 72.5% ");
      sawRotation |= f[0].contains("than under learned") && f[2].startsWith("rotational share (imaginary share of M's eigenvalues) of the strongest previous-token head: RoPE " + cell + ",");
    }
    QVERIFY2(sawShare, qPrintable("no finding measures " + shareText));
    QVERIFY(sawRotation);

    for (const char* part : {"## Against the paper", "| finding | the paper says | this run measured | verdict |", "- Seeds: 1, 2",
                             "- Command: `attnlab-cli study seed-checks --quick --seeds 1,2 --out", "- Machine: ",
                             "the numbers mean nothing", "## R3: QK spectra", "## R7: head-drop curves"})
      QVERIFY2(report.contains(part), part);
    for (const QString& model : models) {
      QVERIFY2(QFileInfo(out + "/charts/head_drop_" + model + ".png").size() > 1000, qPrintable(model));
      if (model.startsWith("induction"))
        for (const char* seed : {"1", "2"})
          QVERIFY(QFileInfo(out + "/charts/rotational_share_" + model + "_seed" + seed + ".png").size() > 1000);
      QCOMPARE(QFileInfo::exists(out + "/charts/rope_block_share_" + model + "_seed1.png"), model == "induction-rope");
    }
    for (const char* csv : {"null_draw.csv", "importance.csv", "head_drop.csv"}) QVERIFY2(csvLines(out + "/" + csv).size() > 1, csv);
  }

  void badFlagsSayWhy() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("s");
    const struct {
      QStringList flags;
      const char* message;
    } cases[] = {{{"--seeds", "1,x"}, "--seeds '1,x' is not a list of whole numbers"},
                 {{"--seed", "1", "--seeds", "1,2"}, "give --seeds LIST or --seed S (one seed), not both"},
                 {{"--seeds", "1,2,1"}, "--seeds lists seed 1 twice"},
                 {{"--steps", "0"}, "--steps"}};
    for (const auto& c : cases) {
      const Run run = runCli(QStringList{"study", "seed-checks", "--quick", "--out", out} + c.flags);
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains(c.message) && run.err.trimmed().count('\n') == 0, run.err.constData());
    }
  }
};

QTEST_MAIN(TestStudySeedChecksCli)
#include "test_study_seed_checks_cli.moc"
