// attnlab-cli's cache commands end to end: generate through a KV cache with a policy and budget
// (occupancy and bytes), their bad input, and the study command refusing to run without a study name.
#include <QtTest>

#include "cli_support.h"

class TestKvCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString model_;

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    model_ = tmp_.filePath("lm");
    const Run train = runCli({"train", "--preset", "default", "--set", "model.d_model=16", "--set", "model.n_layers=1", "--set",
                              "model.n_heads=2", "--set", "model.context=24", "--set", "model.positional=rope", "--set",
                              "model.retention_gate=true", "--set", "train.batch=4", "--steps", "3", "--out", model_, "--quiet"});
    QVERIFY2(train.exitCode == 0, train.err.constData());
  }

  void generateReportsOccupancyAndBytes() {
    const Run run = runCli({"generate", "--model", model_, "--prompt", "the", "--tokens", "9", "--temperature", "0", "--policy", "window",
                            "--budget", "4", "--json"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonObject cache = QJsonDocument::fromJson(run.out).object()["cache"].toObject();
    QCOMPARE(cache["policy"].toString(), QString("window"));
    const QJsonArray steps = cache["steps"].toArray();
    QCOMPARE(steps.size(), 9);  // the prompt token and 8 of the 9 new ones (the last needs no step)
    // one layer, two KV heads, d_head 8: an entry costs 2 x 8 x 4 bytes per head
    QCOMPARE(steps[2].toObject()["live"].toInt(), 2 * 3);
    QCOMPARE(steps[8].toObject()["live"].toInt(), 2 * 4);
    QCOMPARE(steps[8].toObject()["bytes"].toInt(), 2 * 4 * 64);
    QCOMPARE(steps[8].toObject()["evicted"].toInt(), 2);
    QCOMPARE(cache["dense_bytes"].toInt(), 2 * 9 * 64);
    for (const QJsonValue& h : cache["heads"].toArray()) QCOMPARE(h.toObject()["live"].toArray().size(), 4);
    // text mode prints the per-step table and the final positions
    const Run text = runCli({"generate", "--model", model_, "--prompt", "the", "--tokens", "9", "--temperature", "0", "--policy",
                             "streaming_llm", "--budget", "4", "--policy-set", "sinks=1"});
    QVERIFY2(text.exitCode == 0, text.err.constData());
    QVERIFY(text.out.contains("KV cache: policy streaming_llm, budget 4 per head"));
    QVERIFY(text.out.contains("layer 0 kv head 1: 4 live (0, 6-8), 256 bytes"));
  }

  void badCacheFlagsSayWhy_data() {
    QTest::addColumn<QStringList>("flags");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown policy") << QStringList{"--policy", "lru", "--budget", "4"} << "unknown eviction policy 'lru'";
    QTest::newRow("no budget") << QStringList{"--policy", "h2o"} << "needs a budget";
    QTest::newRow("zero budget") << QStringList{"--policy", "h2o", "--budget", "0"} << "whole number of entries >= 1";
    QTest::newRow("ratio") << QStringList{"--policy", "h2o", "--budget", "120%"} << "must be in (0%, 100%]";
    QTest::newRow("scope") << QStringList{"--policy", "h2o", "--budget", "4", "--budget-scope", "model"} << "scope 'model'";
    QTest::newRow("setting") << QStringList{"--policy", "h2o", "--budget", "4", "--policy-set", "recent_ratio=3"} << "recent_ratio";
    QTest::newRow("not a number") << QStringList{"--policy", "h2o", "--budget", "4", "--policy-set", "recent_ratio"} << "not KEY=NUMBER";
  }
  void badCacheFlagsSayWhy() {
    QFETCH(QStringList, flags);
    QFETCH(QString, message);
    const Run run = runCli(QStringList{"generate", "--model", model_, "--prompt", "the", "--tokens", "2"} + flags);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.startsWith("attnlab-cli: ") && run.err.contains(message.toUtf8()), run.err.constData());
    QCOMPARE(run.err.count('\n'), 1);
  }

  void listShowsThePolicies() {
    const Run run = runCli({"list", "--json"});
    QVERIFY(run.exitCode == 0);
    QCOMPARE(QJsonDocument::fromJson(run.out).object()["eviction"].toArray().size(), 13);  // the ten of the catalogue plus pyramidkv, adakv and duo_attention
  }

  void studyNeedsASubcommand() {
    const QString out = tmp_.filePath("study");
    const Run missing = runCli({"study", "--out", out});
    QCOMPARE(missing.exitCode, 2);
    QVERIFY(missing.err.contains("needs a subcommand first (known: live-cache, low-precision, seed-checks, projection-sharing, extrapolation, sinks, phase-change, qk-runaway, all)"));
  }
};

QTEST_MAIN(TestKvCli)
#include "test_kv_cli.moc"
