// attnlab-cli study qk-runaway --quick: every setting, variant and seed in results.csv, the
// per-step largest scores in scores.csv, a chart per setting, the report's tables (one cell
// recomputed from the CSV) and findings; and 'train' telling a QK-guard switch on its output.
#include <QtTest>

#include <cmath>

#include "cli_support.h"
#include "study_cli_support.h"

class TestStudyQkRunawayCli : public QObject {
  Q_OBJECT

 private slots:
  void quickStudyWritesTheReport() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("qk");
    const Run run = runCli({"study", "qk-runaway", "--quick", "--seeds", "1,2", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QStringList lines = csvLines(out + "/results.csv");
    QCOMPARE(lines.value(0),
             QString("setting,lr,precision,variant,seed,diverged,final_loss,val_loss,accuracy,peak_score,final_score,guard_switches,seconds"));
    QCOMPARE(lines.size(), 1 + 4 /*settings*/ * 3 /*variants*/ * 2 /*seeds*/);
    QList<double> softmaxLosses;  // lr x1 fp32, softmax: the first table's first cell
    for (const QString& line : lines.mid(1)) {
      const QStringList f = line.split(',');
      QCOMPARE(f.size(), 13);
      QVERIFY(f[4] == "1" || f[4] == "2");
      if (f[2] == "bf16") QVERIFY(f[0].endsWith("bf16"));
      if (f[3] == "qk_norm") QVERIFY2(f[9].toDouble() > 0, qPrintable(line));
      if (f[0] == "lr x1 fp32" && f[3] == "softmax" && f[5] == "0") softmaxLosses << f[6].toDouble();
    }
    QCOMPARE(softmaxLosses.size(), 2);
    // mean +- t_{0.975,1} s / sqrt(2), t = 12.706
    const double mean = (softmaxLosses[0] + softmaxLosses[1]) / 2, s = std::abs(softmaxLosses[0] - softmaxLosses[1]) / std::sqrt(2.0);
    const double half = 12.706 * s / std::sqrt(2.0);
    const QString cell = QString("%1 [%2, %3]").arg(mean, 0, 'f', 3).arg(mean - half, 0, 'f', 3).arg(mean + half, 0, 'f', 3);
    const QString report = readText(out + "/report.md");
    QVERIFY2(report.contains("| softmax | 0/2 | " + cell + " |"), qPrintable("expected the cell " + cell + " in\n" + report));
    for (const char* setting : {"lr x1 fp32", "lr x10 fp32", "lr x1 bf16", "lr x10 bf16"}) {
      QVERIFY2(report.contains(QString("## %1\n").arg(setting)), setting);
      QVERIFY(report.contains(QString("| softmax's largest score runs away, qk_norm's does not (%1) |").arg(setting)));
      QVERIFY(QFileInfo(out + "/charts/scores_" + QString(setting).replace(' ', '_') + ".png").size() > 1000);
    }
    for (const char* part : {"- Command: `attnlab-cli study qk-runaway --quick --seeds 1,2 --out", "- Seeds: 1, 2", "- Machine: ",
                             "## Against the paper", "| qk_guard |"})
      QVERIFY2(report.contains(part), part);
    const QStringList scores = csvLines(out + "/scores.csv");
    QCOMPARE(scores.value(0), QString("setting,variant,seed,step,layer,max_score"));
    QVERIFY(scores.size() > 24 * 2 * 10);  // every run, both layers, many steps
  }

  void trainTellsTheSwitch() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath("run");
    const Run run = runCli({"train", "--preset", "induction", "--set", "model.d_model=16", "--set", "model.n_heads=2", "--set",
                            "train.batch=4", "--set", "train.qk_guard=0.001", "--steps", "3", "--out", out, "--quiet"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.out.contains("QK-guard: layer 1 at step 1 (largest score ") && run.out.contains("> 0.001): qk_norm from step 2"),
             run.out.constData());
    QVERIFY(run.out.contains("QK-guard: layer 2 at step 1"));  // layers count from 1 in messages
    const QString history = readText(out + "/history.csv");
    QVERIFY2(history.section(QLatin1Char('\n'), 0, 0).contains(",max_score_L0,max_score_L1,") && history.section(QLatin1Char('\n'), 0, 0).endsWith(",qk_guard_switch"), qPrintable(history));
    QVERIFY(history.section('\n', 1, 1).endsWith(",0;1"));
    QVERIFY(readText(out + "/config.json").count("qk_norm") == 2);
  }

  void badSeedsSayWhy() {
    QTemporaryDir tmp;
    const Run run = runCli({"study", "qk-runaway", "--quick", "--seeds", "1,x", "--out", tmp.filePath("qk")});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--seeds '1,x' is not a list of whole numbers"), run.err.constData());
  }
};

QTEST_MAIN(TestStudyQkRunawayCli)
#include "test_study_qk_runaway_cli.moc"
