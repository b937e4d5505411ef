// The .attnlab-compare file: every field round-trips, and a corrupt or foreign file is refused
// with a one-line reason while the document passed in stays untouched.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "io/comparison_file.h"
#include "io/config_json.h"

using namespace attnlab;

namespace {

ComparisonDocument twoRuns() {
  ComparisonDocument d;
  for (const char* name : {"induction", "softmax_vs_sigmoid"}) {
    ComparisonRun run;
    if (!loadPreset(name, run.config).empty()) qFatal("preset %s", name);
    d.runs.push_back(run);
  }
  d.runs[0].checkpoint = "cmp.runs/run-1";
  d.runs[1].model_folder = "/models/gpt2";
  d.view = "model";
  d.columns = 1;
  d.oneAfterAnother = true;
  d.probe = {3, 1, 4, 1, 5};
  d.layer = 1;
  d.head = 2;
  d.policy = "learned_gate";
  d.budget = "25%";
  return d;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

class ComparisonFileTest : public QObject {
  Q_OBJECT
 private slots:
  void everyFieldRoundTrips() {
    const ComparisonDocument d = twoRuns();
    QTemporaryDir dir;
    const std::string path = dir.filePath("cmp.attnlab-compare").toStdString();
    QCOMPARE(q(writeComparisonFile(path, d)), QString());
    ComparisonDocument back;
    QCOMPARE(q(readComparisonFile(path, back)), QString());
    QCOMPARE(back.runs.size(), size_t(2));
    QCOMPARE(back.runs[0].config.name, std::string("Induction heads"));
    QCOMPARE(back.runs[1].config.model.attention, std::vector<std::string>{"sigmoid"});
    QCOMPARE(configToJson(back.runs[1].config), configToJson(d.runs[1].config));
    QCOMPARE(back.runs[0].checkpoint, std::string("cmp.runs/run-1"));
    QCOMPARE(back.runs[1].checkpoint, std::string());
    QCOMPARE(back.runs[0].model_folder, std::string());
    QCOMPARE(back.runs[1].model_folder, std::string("/models/gpt2"));
    QCOMPARE(back.view, std::string("model"));
    QCOMPARE(back.columns, 1);
    QVERIFY(back.oneAfterAnother);
    QCOMPARE(back.probe, (std::vector<int>{3, 1, 4, 1, 5}));
    QCOMPARE(back.layer, 1);
    QCOMPARE(back.head, 2);
    QCOMPARE(back.policy, std::string("learned_gate"));
    QCOMPARE(back.budget, std::string("25%"));
    // Written atomically: no temporary file is left beside it.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"cmp.attnlab-compare"});
  }

  void badFilesAreRefusedWithAReason_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    std::string good = comparisonToJson(twoRuns());
    QTest::newRow("not json") << "{\"format\": \"attnlab-comparison-1\", \"runs\": [" << "not JSON";
    QTest::newRow("an experiment config") << q(configToJson(twoRuns().runs[0].config)) << "\"format\" must be \"attnlab-comparison-1\"";
    QTest::newRow("truncated") << q(good.substr(0, good.size() / 2)) << "not JSON";
    QTest::newRow("bad run config") << q(std::string(good).replace(good.find("\"d_model\": 64"), 13, "\"d_model\": 63"))
                                    << "run 1: model.n_heads (4) must divide model.d_model (63)";
    QTest::newRow("one run") << "{\"format\": \"attnlab-comparison-1\", \"runs\": [{\"config\": {}}]}" << "2 to 4 runs";
    QTest::newRow("bad schedule") << q(std::string(good).replace(good.find("\"one_after_another\""), 19, "\"sometimes\""))
                                  << "\"schedule\" must be";
    QTest::newRow("checkpoint and model folder")
        << q(std::string(good).replace(good.find("\"model_folder\""), 14, "\"checkpoint\": \"x\", \"model_folder\""))
        << "run 2: names both a \"checkpoint\" and a \"model_folder\"";
    QTest::newRow("wrong type") << q(std::string(good).replace(good.find("\"columns\": 1"), 12, "\"columns\": \"two\"")) << "\"columns\" has the wrong type";
  }
  void badFilesAreRefusedWithAReason() {
    QFETCH(QString, text);
    QFETCH(QString, reason);
    ComparisonDocument kept = twoRuns();
    const std::string before = comparisonToJson(kept);
    const QString why = q(comparisonFromJson(text.toStdString(), kept));
    QVERIFY2(why.contains(reason), qPrintable(why));
    QVERIFY2(!why.contains('\n'), qPrintable(why));
    QCOMPARE(q(comparisonToJson(kept)), q(before));  // nothing was half-read into it
  }

  void aMissingFileNamesItself() {
    ComparisonDocument d;
    const QString why = q(readComparisonFile("/nonexistent/x.attnlab-compare", d));
    QVERIFY2(why.contains("/nonexistent/x.attnlab-compare"), qPrintable(why));
  }
};

QTEST_APPLESS_MAIN(ComparisonFileTest)
#include "test_comparison_file.moc"
