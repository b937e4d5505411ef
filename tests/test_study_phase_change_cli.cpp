// attnlab-cli study phase-change --quick: every model and seed in results.csv and every measured
// point in curves.csv, the report's table (one cell recomputed from the CSV: mean and 95% interval
// over the 2 seeds), findings.csv (header, verdicts, measured text recomputed from the CSV), the
// charts, and bad flags refused in one line with the usage exit code.
#include <QtTest>

#include <cmath>

#include "cli_support.h"
#include "study_cli_support.h"

class TestStudyPhaseChangeCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("phase");
    const Run run = runCli({"study", "phase-change", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());

    const QStringList results = readText(out + "/results.csv").split('\n', Qt::SkipEmptyParts);
    QCOMPARE(results.value(0), QString("model,layers,attention,seed,induction_step,induction_width,induction_start,induction_plateau,"
                                       "accuracy_step,final_train_loss,final_val_loss,final_accuracy,final_induction_score,seconds"));
    QCOMPARE(results.size(), 1 + 3 /*models*/ * 2 /*seeds*/);
    QMap<QString, QList<double>> accuracy, induction;
    QMap<QString, int> changed;
    for (const QString& line : results.mid(1)) {
      const QStringList f = csvFields(line);
      QCOMPARE(f.size(), 14);
      QVERIFY2(f[11].toDouble() >= 0 && f[11].toDouble() <= 1, qPrintable(line));
      accuracy[f[0]] << f[11].toDouble();
      induction[f[0]] << f[12].toDouble();
      changed[f[0]] += !f[4].isEmpty();
    }
    QCOMPARE(accuracy.keys(), (QStringList{"1-layer momentum", "1-layer softmax", "2-layer softmax"}));

    const QStringList curves = readText(out + "/curves.csv").split('\n', Qt::SkipEmptyParts);
    QCOMPARE(curves.value(0), QString("model,seed,step,train_loss,val_loss,in_context_accuracy,induction_score,induction_layer,previous_token_score"));
    QCOMPARE(curves.size(), 1 + 3 * 2 * (1 + 40 / 5));  // step 0 and every 5 of 40 steps
    QCOMPARE(csvFields(curves[1]).value(2), QString("0"));
    QVERIFY(csvFields(curves[1]).value(3).isEmpty());  // no training loss before the first step
    // the last point of the 2-layer model's first seed is its final accuracy in results.csv
    QCOMPARE(csvFields(curves[9]).mid(0, 3), (QStringList{"2-layer softmax", "1", "40"}));
    QVERIFY(std::abs(csvFields(curves[9])[5].toDouble() - accuracy["2-layer softmax"][0]) < 1e-5);

    const QString report = readText(out + "/report.md");
    const QString cell = twoSeedCell(accuracy["2-layer softmax"][0], accuracy["2-layer softmax"][1]);
    const QString row = report.section("| 2-layer softmax |", 1, 1).section('\n', 0, 0);
    QVERIFY2(row.split('|').value(5).trimmed() == cell, qPrintable("expected the final accuracy " + cell + " in the row" + row));
    for (const char* part : {"| model | phase change | induction step | 25-75% width | accuracy step | final val loss | final in-context accuracy |",
                             "| 1-layer softmax |", "| 1-layer momentum |", "## Per run", "## Against the paper",
                             "| finding | the paper says | this run measured | verdict |", "- Seeds: 1, 2", "- Machine: ",
                             "- Command: `attnlab-cli study phase-change --quick --seeds 1,2 --out", "the numbers mean nothing"})
      QVERIFY2(report.contains(part), part);

    const QStringList findings = readText(out + "/findings.csv").split('\n', Qt::SkipEmptyParts);
    QCOMPARE(findings.value(0), QString("finding,paper,measured,verdict"));
    QCOMPARE(findings.size(), 1 + 4);
    for (const QString& line : findings.mid(1)) {
      const QStringList f = csvFields(line);
      QCOMPARE(f.size(), 4);
      QVERIFY2(QStringList({"agrees", "partly", "does not"}).contains(f[3]), qPrintable(line));
      QVERIFY2(report.contains(QString(f[2]).replace('|', "\\|")), qPrintable("the report's table holds " + f[2]));
    }
    const QString twoLayers = csvFields(findings[1])[2], oneLayer = csvFields(findings[3])[2], momentum = csvFields(findings[4])[2];
    QVERIFY2(twoLayers.contains(QString("in %1 of 2 seeds").arg(changed["2-layer softmax"])), qPrintable(twoLayers));
    QVERIFY2(oneLayer.contains("final induction score " + twoSeedCell(induction["1-layer softmax"][0], induction["1-layer softmax"][1]) +
                               " against two layers' " + twoSeedCell(induction["2-layer softmax"][0], induction["2-layer softmax"][1])),
             qPrintable(oneLayer));
    QVERIFY2(momentum.contains("final in-context accuracy " + twoSeedCell(accuracy["1-layer momentum"][0], accuracy["1-layer momentum"][1]) +
                               " against one softmax layer's " + twoSeedCell(accuracy["1-layer softmax"][0], accuracy["1-layer softmax"][1])),
             qPrintable(momentum));

    for (const char* chart : {"induction_2_layer_softmax", "loss_2_layer_softmax", "induction_1_layer_softmax", "loss_1_layer_softmax",
                              "induction_1_layer_momentum", "loss_1_layer_momentum"})
      QVERIFY2(QFileInfo(out + "/charts/" + chart + ".png").size() > 1000, chart);
  }

  void badFlagsSayWhy() {
    QTemporaryDir tmp;
    const struct {
      QStringList flags;
      const char* message;
    } cases[] = {{{"--seeds", "1,x"}, "--seeds '1,x' is not a list of whole numbers"},
                 {{"--every", "30"}, "--every 30 leaves fewer than 3 points in 40 steps"},
                 {{"--gamma", "9"}, "--gamma"},
                 {{"--steps", "two"}, "--steps"}};
    for (const auto& c : cases) {
      const Run run = runCli(QStringList{"study", "phase-change", "--quick", "--out", tmp.filePath("p")} + c.flags);
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains(c.message), run.err.constData());
      QCOMPARE(run.err.trimmed().count('\n'), 0);  // one line
    }
  }
};

QTEST_MAIN(TestStudyPhaseChangeCli)
#include "test_study_phase_change_cli.moc"
