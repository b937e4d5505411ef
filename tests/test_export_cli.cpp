// attnlab-cli export pytorch --scale (the plan) and data (the token files), without PyTorch.
#include <QtTest>

#include "cli_support.h"
#include "io/config_json.h"
#include "model/model.h"

using namespace attnlab;

class TestExportCli : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void scalePlanCountsTheScaledModel() {
    const Run run = runCli({"export", "pytorch", "--preset", "induction", "--scale", "d_model=32,n_layers=3,n_heads=2", "--devices",
                            "2", "--tokens-per-second", "1000"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    ExperimentConfig c;
    QVERIFY(loadPreset("induction", c).empty());
    c.model.d_model = 32, c.model.n_layers = 3, c.model.n_heads = 2, c.model.vocab = 33;
    const double params = static_cast<double>(Model(c.model, 1).params().totalElements());
    const QString out = QString::fromUtf8(run.out);
    QVERIFY2(out.contains(QString("parameters   %1 k\n").arg(params / 1000, 0, 'g', 3)), qPrintable(out));
    // 6 FLOP per parameter plus the attention products, per token; 600 steps x 64 x 31 tokens at 1000/s
    const double flops = 6 * params + 6.0 * 3 * 31 * 32;
    QVERIFY2(out.contains(QString("compute      %1 kFLOP per training token").arg(flops / 1000, 0, 'g', 3)), qPrintable(out));
    QVERIFY2(out.contains("32 sequences (2 device(s), DDP"), qPrintable(out));
    QVERIFY2(out.contains("time         19m50s at 1 k tokens/s"), qPrintable(out));  // 1,190,400 tokens / 1000 per s
    QVERIFY(!QFileInfo::exists("export"));
  }

  void scaleRefusesBadKeys() {
    const Run run = runCli({"export", "pytorch", "--preset", "induction", "--scale", "d_model=abc"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.startsWith("attnlab-cli: --scale model.d_model must be an integer"), run.err.constData());
  }

  void dataWritesTheLabsSequences() {
    const QString out = tmp_.path() + "/data";
    const Run run = runCli({"data", "--task", "copy", "--set", "train.batch=4", "--tokens", "100", "--out", out});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QFile meta(out + "/data.json");
    QVERIFY(meta.open(QIODevice::ReadOnly));
    const QJsonObject j = QJsonDocument::fromJson(meta.readAll()).object();
    QCOMPARE(j["format"].toString(), QString("attnlab-data-1"));
    const int T = j["seq_len"].toInt(), V = j["vocab"].toInt();
    QCOMPARE(T, 32);  // copy's natural length, 2 x 16
    QCOMPARE(j["splits"].toObject()["train"].toInt(), 4);  // 100 tokens -> one batch of 4 sequences
    QCOMPARE(j["splits"].toObject()["validation"].toInt(), 16);  // train.eval_batches (4) x 4
    QFile tokens(out + "/train.tokens"), targets(out + "/train.targets");
    QVERIFY(tokens.open(QIODevice::ReadOnly) && targets.open(QIODevice::ReadOnly));
    const QByteArray t = tokens.readAll(), y = targets.readAll();
    QCOMPARE(t.size(), 4 * 32 * 4);
    const auto* ids = reinterpret_cast<const int32_t*>(t.constData());
    const auto* goals = reinterpret_cast<const int32_t*>(y.constData());
    int answers = 0;
    for (int i = 0; i < 4 * 32; ++i) {
      QVERIFY(ids[i] >= 0 && ids[i] < V);
      QVERIFY(goals[i] >= -1 && goals[i] < V);
      if (goals[i] >= 0 && i % T + 1 < T) QCOMPARE(goals[i], ids[i + 1]);  // a target is the next input
      answers += goals[i] >= 0;
    }
    QVERIFY(answers > 0 && answers < 4 * 32);  // the loss mask leaves out the list itself
    // refusing to write into a folder that is not a data folder
    QDir().mkpath(tmp_.path() + "/other");
    QFile(tmp_.path() + "/other/keep.txt").open(QIODevice::WriteOnly);
    const Run refused = runCli({"data", "--task", "copy", "--tokens", "10", "--out", tmp_.path() + "/other"});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("is not an attnlab data folder"), refused.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestExportCli)
#include "test_export_cli.moc"
