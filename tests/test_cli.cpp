// attnlab-cli end to end: runs the built binary (build/bin/attnlab-cli, beside this test) and checks
// its output, the checkpoint it writes, and that bad input ends in one line on stderr and exit 2.
#include <QtTest>
#include <cmath>

#include "cli_support.h"

namespace {

QJsonObject parseObject(const QByteArray& text) {
  QJsonParseError error;
  const QJsonDocument document = QJsonDocument::fromJson(text, &error);
  if (error.error != QJsonParseError::NoError || !document.isObject()) return {};
  return document.object();
}

QList<QByteArray> lines(const QByteArray& text) { return text.trimmed().split('\n'); }

bool containsName(const QJsonArray& members, const QString& name) {
  for (const QJsonValue& m : members)
    if (m.toObject().value("name").toString() == name) return true;
  return false;
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString modelDir_;
  Run train_;

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(cliPath()).isExecutable(), qPrintable("build the attnlab-cli target first: " + cliPath()));
    QVERIFY(tmp_.isValid());
    modelDir_ = tmp_.filePath("induction");
    train_ = runCli(
        {"train", "--preset", "induction", "--steps", "20", "--set", "model.d_model=32", "--out", modelDir_, "--json"});
    QVERIFY2(train_.exitCode == 0, train_.err.constData());
  }

  void listNamesEveryFamily() {
    const Run run = runCli({"list"});
    QCOMPARE(run.exitCode, 0);
    QVERIFY(run.out.contains("\n  softmax "));
    QVERIFY(run.out.contains("\n  rope "));
    QVERIFY(run.out.contains("\n  retention_gate "));  // gates are listed with their formulas
    QVERIFY(run.out.contains("\n  induction "));
    QVERIFY(run.out.contains("theta = 10000"));  // settings are listed with their defaults
  }

  void listJsonParses() {
    const Run run = runCli({"list", "--json"});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject root = parseObject(run.out);
    QVERIFY(containsName(root["attention"].toArray(), "softmax"));
    QVERIFY(containsName(root["positional"].toArray(), "rope"));
    QVERIFY(containsName(root["gates"].toArray(), "output_gate"));
    QVERIFY(containsName(root["tasks"].toArray(), "induction"));
    QVERIFY(containsName(root["presets"].toArray(), "default"));
    for (const QJsonValue& task : root["tasks"].toArray()) {
      QVERIFY(!task["summary"].toString().isEmpty());
      for (const QJsonValue& s : task["settings"].toArray()) {
        QVERIFY(!s["key"].toString().isEmpty());
        QVERIFY(s["min"].toDouble() <= s["default"].toDouble() && s["default"].toDouble() <= s["max"].toDouble());
      }
    }
  }

  void trainPrintsFinalMetricsAndSaves() {
    QVERIFY(train_.err.isEmpty());  // --json and no terminal: no progress bar
    const QList<QByteArray> out = lines(train_.out);
    for (const QByteArray& line : out) QVERIFY2(!parseObject(line).isEmpty(), line.constData());
    const QJsonObject final = parseObject(out.last());
    QCOMPARE(final["event"].toString(), QString("final"));
    QCOMPARE(final["step"].toInt(), 20);
    for (const char* key :
         {"loss", "val_loss", "perplexity", "accuracy", "exact_match", "tokens_per_second", "seconds"})
      QVERIFY2(final[key].isDouble() && std::isfinite(final[key].toDouble()), key);
    QVERIFY(final["accuracy"].toDouble() >= 0 && final["accuracy"].toDouble() <= 1);
    QVERIFY(std::abs(final["perplexity"].toDouble() - std::exp(final["val_loss"].toDouble())) <
            1e-6 * final["perplexity"].toDouble());
    QCOMPARE(final["out"].toString(), modelDir_);
    for (const char* file : {"config.json", "model.safetensors", "history.csv"})
      QVERIFY2(QFileInfo::exists(modelDir_ + "/" + file), file);
  }

  // The saved weights reproduce the validation loss measured at the end of training.
  void evalMatchesTheEndOfTraining() {
    const Run run = runCli({"eval", "--model", modelDir_, "--json"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonObject eval = parseObject(run.out);
    const QJsonObject final = parseObject(lines(train_.out).last());
    QVERIFY(eval["tokens"].toInt() > 0);
    QVERIFY(std::abs(eval["loss"].toDouble() - final["val_loss"].toDouble()) < 1e-9);
    QVERIFY(std::abs(eval["accuracy"].toDouble() - final["accuracy"].toDouble()) < 1e-9);

    const Run text = runCli({"eval", "--model", modelDir_});
    QCOMPARE(text.exitCode, 0);
    QVERIFY(text.out.contains("perplexity"));
    QVERIFY(text.out.contains("exact match"));
  }

  void traceWritesMapsAndPredictions() {
    const QString file = tmp_.filePath("trace.json");
    const Run run = runCli({"trace", "--model", modelDir_, "--probe", "--out", file, "--json"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject trace = parseObject(f.readAll());
    const int T = trace["tokens"].toArray().size();
    QVERIFY(T > 2);
    QCOMPARE(trace["labels"].toArray().size(), T);
    QCOMPARE(parseObject(run.out)["tokens"].toInt(), T);

    const QJsonArray layers = trace["layers"].toArray();
    QCOMPARE(layers.size(), 2);  // the induction preset's two layers
    for (const QJsonValue& layer : layers) {
      QCOMPARE(layer["variant"].toString(), QString("softmax"));
      QCOMPARE(layer["residual_norm"].toArray().size(), T);
      const QJsonArray heads = layer["heads"].toArray();
      QCOMPARE(heads.size(), 4);
      const QJsonArray weights = heads[0]["weights"].toArray(), scores = heads[0]["scores"].toArray();
      QCOMPARE(weights.size(), T);
      QCOMPARE(scores.size(), T);
      for (int i = 0; i < T; ++i) {
        double rowSum = 0;
        for (int j = 0; j < T; ++j) {
          rowSum += weights[i][j].toDouble();
          QCOMPARE(scores[i][j].isNull(), j > i);  // causal mask: future keys are -inf, written as null
        }
        QVERIFY(std::abs(rowSum - 1.0) < 1e-4);
      }
    }
    const QJsonArray predictions = trace["predictions"].toArray();
    QCOMPARE(predictions.size(), T);
    const QJsonArray top = predictions[T - 1].toArray();
    QCOMPARE(top.size(), 5);
    for (int k = 1; k < 5; ++k) QVERIFY(top[k - 1]["probability"].toDouble() >= top[k]["probability"].toDouble());
  }

  void traceRejectsUnknownToken() {
    const Run run =
        runCli({"trace", "--model", modelDir_, "--text", "a b not-a-symbol", "--out", tmp_.filePath("bad.json")});
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(lines(run.err).size(), 1);
    QVERIFY(run.err.contains("unknown token 'not-a-symbol' at position 2"));
    QVERIFY(!QFileInfo::exists(tmp_.filePath("bad.json")));
  }

  // Greedy decoding is deterministic; 70 new tokens outgrow the 64-token context, so the window slides.
  void generateGreedyIsDeterministic() {
    const QStringList arguments = QStringList{"generate", "--model", modelDir_, "--prompt", "a b c"} +
                                  QStringList{"--tokens", "70", "--temperature", "0", "--json"};
    const Run first = runCli(arguments), second = runCli(arguments);
    QVERIFY2(first.exitCode == 0, first.err.constData());
    const QJsonArray tokens = parseObject(first.out)["tokens"].toArray();
    QCOMPARE(tokens.size(), 70);
    QCOMPARE(first.out, second.out);
  }

  // An absurd learning rate with no clipping drives the loss to NaN within a few dozen steps.
  void divergenceExitsThreeAndSavesNothing() {
    const QString out = tmp_.filePath("diverged");
    QStringList arguments{"train", "--preset", "induction", "--steps", "300", "--out", out, "--quiet"};
    for (const char* assignment :
         {"model.d_model=16", "model.n_heads=2", "model.positional=learned",
          "model.attention_settings.temperature=1000", "train.lr=9.9", "train.grad_clip=0", "train.warmup=0",
          "train.weight_decay=0", "train.beta1=0", "train.beta2=0", "train.eps=1e-30"})
      arguments << "--set" << assignment;
    const Run run = runCli(arguments);
    if (run.exitCode == 0) QSKIP("this configuration no longer diverges; the divergence path went unchecked");
    QCOMPARE(run.exitCode, 3);
    QCOMPARE(run.err.count('\n'), 1);
    QVERIFY2(run.err.startsWith("attnlab-cli: training diverged at step"), run.err.constData());
    QVERIFY(!QFileInfo::exists(out));
  }

  void badInputFailsWithOneLine_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("reason");
    const QString out = tmp_.filePath("never");
    QTest::newRow("no command") << QStringList{} << "no command";
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command 'frobnicate'";
    QTest::newRow("bad flag") << QStringList{"train", "--preset", "induction", "--out", out, "--bogus"}
                              << "unknown flag --bogus";
    QTest::newRow("missing value") << QStringList{"train", "--preset", "induction", "--out", out, "--steps"}
                                   << "--steps needs a value";
    QTest::newRow("bad number") << QStringList{"train", "--preset", "induction", "--out", out, "--steps", "ten"}
                                << "--steps must be";
    QTest::newRow("unknown preset") << QStringList{"train", "--preset", "nope", "--out", out} << "unknown preset";
    QTest::newRow("bad --set value") << QStringList{"train", "--preset", "induction", "--set", "model.d_model=abc",
                                                    "--out", out}
                                     << "model.d_model must be an integer";
    QTest::newRow("bad --set key") << QStringList{"train", "--preset", "induction", "--set", "model.colour=red",
                                                  "--out", out}
                                   << "unknown key model.colour";
    QTest::newRow("invalid config") << QStringList{"train",           "--preset", "induction", "--set",
                                                   "model.n_heads=3", "--out",    out}
                                    << "must divide model.d_model";
    // 100 million sequences of 128 tokens: about 700 TiB of activations, refused before the model is built.
    QTest::newRow("too large for memory") << QStringList{"train", "--preset", "default", "--set", "train.batch=100000000",
                                                         "--out", out}
                                          << "at batch 100000000 x context 128); ";
    QTest::newRow("unreadable config") << QStringList{"train", "--config", tmp_.filePath("absent.json"), "--out", out}
                                       << "cannot read";
    QTest::newRow("out is a file") << QStringList{"train", "--preset", "induction", "--out", cliPath()}
                                   << "is not a folder";
    QTest::newRow("missing model dir") << QStringList{"eval", "--model", tmp_.filePath("absent")}
                                       << "no such checkpoint folder";
    QTest::newRow("trace without input") << QStringList{"trace", "--model", modelDir_, "--out", out} << "--text";
  }

  void badInputFailsWithOneLine() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, reason);
    const Run run = runCli(arguments);
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.out.isEmpty());
    QCOMPARE(run.err.count('\n'), 1);
    QVERIFY(run.err.endsWith('\n'));
    QVERIFY2(run.err.startsWith("attnlab-cli: ") && run.err.contains(reason.toUtf8()), run.err.constData());
    QVERIFY(!QFileInfo::exists(tmp_.filePath("never")));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
