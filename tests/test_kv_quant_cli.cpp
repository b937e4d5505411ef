// attnlab-cli with a quantised KV cache: generate and eval --kv-quant report the bytes the cache
// holds (d_head codes plus one float scale per row), eval's perplexity through the cache, and a
// bad format's one-line message.
#include <QtTest>

#include "cli_support.h"

class TestKvQuantCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString model_;

  QJsonObject evalJson(const QStringList& extra) {
    const Run run = runCli(QStringList{"eval", "--model", model_, "--sequences", "2", "--json"} + extra);
    if (run.exitCode != 0) qWarning("%s", run.err.constData());
    return QJsonDocument::fromJson(run.out).object();
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    model_ = tmp_.filePath("lm");
    // one layer, two heads of d_head 8, ALiBi (so nothing but the bytes differs between formats)
    const Run train = runCli({"train", "--preset", "default", "--set", "model.d_model=16", "--set", "model.n_layers=1", "--set",
                              "model.n_heads=2", "--set", "model.context=24", "--set", "model.positional=alibi", "--set",
                              "train.batch=4", "--steps", "3", "--out", model_, "--quiet"});
    QVERIFY2(train.exitCode == 0, train.err.constData());
  }

  void generateCountsQuantisedBytes() {
    for (const auto& [format, row] : {std::pair{"fp32", 32}, std::pair{"int8", 12}, std::pair{"int4", 8}}) {
      const Run run = runCli({"generate", "--model", model_, "--prompt", "the", "--tokens", "5", "--temperature", "0", "--kv-quant",
                              format, "--json"});
      QVERIFY2(run.exitCode == 0, run.err.constData());
      const QJsonObject cache = QJsonDocument::fromJson(run.out).object()["cache"].toObject();
      QCOMPARE(cache["kv_quant"].toString(), QString(format));
      const int positions = cache["steps"].toArray().size();
      // every position stays (policy full): 2 KV heads x (K and V) x the row's bytes
      QCOMPARE(cache["bytes"].toInt(), positions * 2 * 2 * row);
      QCOMPARE(cache["dense_bytes"].toInt(), positions * 2 * 2 * 32);
      QCOMPARE(cache["dense_bytes_in_format"].toInt(), positions * 2 * 2 * row);
    }
  }

  void evalReportsPerplexityAgainstBytes() {
    const QJsonObject fp32 = evalJson({"--kv-quant", "fp32"}), int8 = evalJson({"--kv-quant", "int8"}),
                      int4 = evalJson({"--kv-quant", "int4"});
    QVERIFY(fp32["perplexity"].toDouble() > 1);
    QCOMPARE(fp32["mean_bytes"].toDouble(), fp32["dense_fp32_mean_bytes"].toDouble());
    QCOMPARE(int8["mean_bytes"].toDouble() * 32, fp32["mean_bytes"].toDouble() * 12);
    QCOMPARE(int4["mean_bytes"].toDouble() * 32, fp32["mean_bytes"].toDouble() * 8);
    QVERIFY(int8["perplexity"].toDouble() != fp32["perplexity"].toDouble());  // the quantised values are what attention read
    // composed with eviction: a window of 4 holds at most 4 rows per head
    const QJsonObject windowed = evalJson({"--kv-quant", "int8", "--policy", "window", "--budget", "4"});
    QVERIFY(windowed["mean_bytes"].toDouble() <= 4 * 2 * 2 * 12);
    QVERIFY(windowed["live_share"].toDouble() < 1);
  }

  void badFormatSaysWhich() {
    const Run run = runCli({"eval", "--model", model_, "--kv-quant", "int3"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.err.contains("--kv-quant 'int3' is not a cache format (known: fp32, int8, int4)"));
  }
};

QTEST_MAIN(TestKvQuantCli)
#include "test_kv_quant_cli.moc"
