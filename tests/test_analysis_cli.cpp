// attnlab-cli analyze end to end on a freshly trained tiny model: every analysis in the JSON,
// the layer/head selection, the snapshot series, and one-line errors for bad input.
#include <QtTest>

#include "cli_support.h"

class TestAnalysisCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString model_;

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(cliPath()).isExecutable(), qPrintable("build the attnlab-cli target first: " + cliPath()));
    model_ = tmp_.filePath("tiny");
    const Run train = runCli({"train", "--preset", "induction", "--steps", "15", "--set", "model.d_model=32", "--out", model_, "--quiet"});
    QVERIFY2(train.exitCode == 0, train.err.constData());
  }

  void jsonHoldsEveryAnalysis() {
    const Run run = runCli({"analyze", "--model", model_, "--json", "--batches", "1"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonObject root = QJsonDocument::fromJson(run.out).object();
    QCOMPARE(root["format"].toString(), QString("attnlab-analysis-1"));
    const QJsonObject a = root["analyses"].toObject();
    for (const char* name : {"qk_spectrum", "map_diagnostics", "head_importance", "qk_embedding", "rollout"})
      QVERIFY2(a.contains(name), name);
    const QJsonArray spectra = a["qk_spectrum"].toObject()["heads"].toArray();
    QCOMPARE(spectra.size(), 8);  // 2 layers x 4 heads
    const QJsonObject head = spectra[0].toObject();
    QCOMPARE(head["eigenvalues"].toArray().size(), 8);  // d_head 8
    QCOMPARE(head["null_draw"].toArray().size(), 8);
    QCOMPARE(head["rope_blocks"].toArray().size(), 4);  // the induction preset uses RoPE
    QVERIFY(a["qk_spectrum"].toObject()["null"].toObject()["circular_radius"].toDouble() > 0);
    QCOMPARE(a["head_importance"].toObject()["curves"].toArray().size(), 3);
    QCOMPARE(a["head_importance"].toObject()["curves"].toArray()[0].toObject()["metric"].toArray().size(), 9);
    const QJsonArray points = a["qk_embedding"].toObject()["points"].toArray();
    QVERIFY(points.size() > 100);
    QCOMPARE(points[0].toObject()["xyz"].toArray().size(), 3);
    const QJsonArray rollout = a["rollout"].toObject()["rollout"].toArray();
    QCOMPARE(rollout.size(), a["rollout"].toObject()["tokens"].toArray().size());
  }

  void layerAndHeadSelectOneHead() {
    const Run run = runCli({"analyze", "--model", model_, "--json", "--layer", "1", "--head", "2", "--only",
                            "qk_spectrum,map_diagnostics,qk_embedding", "--series", model_, "--series", model_});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonObject a = QJsonDocument::fromJson(run.out).object()["analyses"].toObject();
    QVERIFY(!a.contains("head_importance"));
    const QJsonArray heads = a["map_diagnostics"].toObject()["heads"].toArray();
    QCOMPARE(heads.size(), 1);
    QCOMPARE(heads[0].toObject()["layer"].toInt(), 1);
    QCOMPARE(heads[0].toObject()["head"].toInt(), 2);
    QCOMPARE(a["qk_embedding"].toObject()["head"].toInt(), 2);
    QCOMPARE(a["qk_spectrum_series"].toArray().size(), 2);
  }

  void textSummary() {
    const Run run = runCli({"analyze", "--model", model_, "--only", "qk_spectrum,rollout"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY(run.out.contains("== qk_spectrum"));
    QVERIFY(run.out.contains("circular-law radius"));
    QVERIFY(run.out.contains("== rollout"));
  }

  void badInputIsOneLine() {
    for (const QStringList& args : {QStringList{"analyze", "--model", model_, "--layer", "2"},
                                    QStringList{"analyze", "--model", model_, "--only", "nonsense"},
                                    QStringList{"analyze", "--model", tmp_.filePath("missing")},
                                    QStringList{"analyze", "--model", model_, "--series", tmp_.filePath("missing")},
                                    QStringList{"study"}}) {
      const Run run = runCli(args);
      QVERIFY2(run.exitCode == 2, qPrintable(args.join(' ') + ": " + run.err));
      QCOMPARE(run.err.trimmed().count('\n'), 0);
      QVERIFY(run.err.startsWith("attnlab-cli: "));
    }
  }
};

QTEST_GUILESS_MAIN(TestAnalysisCli)
#include "test_analysis_cli.moc"
