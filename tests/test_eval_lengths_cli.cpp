// attnlab-cli eval --lengths: loss and accuracy at multiples of the training length, as a table
// and as JSON; a learned-position model refuses lengths past its context in one line (exit 2).
#include <QtTest>

#include <cmath>

#include "cli_support.h"

namespace {
QJsonObject parseObject(const QByteArray& text) {
  const QJsonDocument document = QJsonDocument::fromJson(text);
  return document.isObject() ? document.object() : QJsonObject{};
}

// A quick induction model (context 32, trained on 15 tokens) with the given positions.
Run trainInduction(const QString& dir, const QString& positional) {
  return runCli({"train", "--preset", "induction", "--steps", "15", "--threads", "1", "--set", "model.d_model=32",
                 "--set", "model.context=32", "--set", "task.settings.length=8", "--set", "train.batch=16", "--set",
                 "model.positional=" + positional, "--out", dir, "--json", "--quiet"});
}
}  // namespace

class TestEvalLengthsCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(cliPath()).isExecutable(), qPrintable("build the attnlab-cli target first: " + cliPath()));
    QVERIFY(tmp_.isValid());
    for (const char* positional : {"rope", "learned"}) {
      const Run run = trainInduction(tmp_.filePath(positional), positional);
      QVERIFY2(run.exitCode == 0, run.err.constData());
    }
  }

  void jsonHasOneRowPerMultiple() {
    const Run run = runCli({"eval", "--model", tmp_.filePath("rope"), "--lengths", "1,2,4,8", "--batches", "1", "--json"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    const QJsonObject root = parseObject(run.out);
    QCOMPARE(root["training_length"].toInt(), 15);
    QCOMPARE(root["context"].toInt(), 32);
    QCOMPARE(root["positional"].toString(), QString("rope"));
    const QJsonArray rows = root["lengths"].toArray();
    QCOMPARE(rows.size(), 4);
    const int multiples[] = {1, 2, 4, 8};
    for (int i = 0; i < 4; ++i) {
      const QJsonObject row = rows[i].toObject();
      QCOMPARE(row["multiple"].toDouble(), double(multiples[i]));
      QCOMPARE(row["length"].toInt(), 15 * multiples[i]);  // 60 and 120 lie past the context of 32
      QVERIFY(std::isfinite(row["loss"].toDouble()) && row["loss"].toDouble() > 0);
      QVERIFY(row["accuracy"].toDouble() >= 0 && row["accuracy"].toDouble() <= 1);
      QVERIFY(row["tokens"].toInt() > 0);
    }
    // 1x is exactly the plain evaluation
    const Run plain = runCli({"eval", "--model", tmp_.filePath("rope"), "--batches", "1", "--json"});
    QCOMPARE(parseObject(plain.out)["loss"].toDouble(), rows[0].toObject()["loss"].toDouble());
  }

  void tablePrintsEachMultiple() {
    const Run run = runCli({"eval", "--model", tmp_.filePath("rope"), "--lengths", "1,2.5", "--batches", "1"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY(run.out.contains("multiple"));
    QVERIFY(run.out.contains("accuracy"));
    QVERIFY(run.out.contains("\n1x "));
    QVERIFY(run.out.contains("\n2.5x "));
    QVERIFY(run.out.contains(" 38 "));  // round(2.5 x 15)
  }

  void learnedPositionsRefuse() {
    const Run within = runCli({"eval", "--model", tmp_.filePath("learned"), "--lengths", "2", "--batches", "1", "--json"});
    QVERIFY2(within.exitCode == 0, within.err.constData());  // 30 tokens fit the context of 32
    const Run run = runCli({"eval", "--model", tmp_.filePath("learned"), "--lengths", "1,4", "--batches", "1"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.err.startsWith("attnlab-cli: a sequence of 60 tokens is longer than the context of 32"));
    QVERIFY(run.err.contains("learned positions exist only for the trained positions"));
    QCOMPARE(run.err.count('\n'), 1);
  }

  void badMultiplesAreRefused_data() {
    QTest::addColumn<QString>("lengths");
    for (const char* bad : {"0", "2,x", "-1", "65", "1,,2", ""}) QTest::newRow(bad) << bad;
  }
  void badMultiplesAreRefused() {
    QFETCH(QString, lengths);
    const Run run = runCli({"eval", "--model", tmp_.filePath("rope"), "--lengths", lengths});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--lengths"), run.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestEvalLengthsCli)
#include "test_eval_lengths_cli.moc"
