// attnlab-cli train --model HFDIR --text FILE: fine-tunes a Hugging Face folder's model on a text
// file through its own tokenizer and saves a lab checkpoint; --steps 0 saves it untrained; the
// checkpoint traces with the fine-tuned weights and export-hf writes it back in the folder's layout,
// also once the source folder is gone (the checkpoint keeps a copy of what describes it).
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "hf_support.h"

using nlohmann::json;
using namespace attnlab::testing;

class HfFinetuneCliTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString hf_, text_;

  QString path(const QString& name) const { return tmp_.path() + "/" + name; }

  json logits(const QString& model) {
    const QString out = path("trace.json");
    const Run r = runCli({"trace", "--model", model, "--ids", "5,256,258,40,261,7", "--logits", "--out", out, "--threads", "1"});
    if (r.exitCode != 0) qWarning("%s", r.err.constData());
    QFile f(out);
    if (r.exitCode != 0 || !f.open(QIODevice::ReadOnly)) return json();
    return json::parse(f.readAll().toStdString())["logits"];
  }

  static double maxDifference(const json& a, const json& b) {
    double worst = 0;
    for (size_t t = 0; t < a.size(); ++t)
      for (size_t v = 0; v < a[t].size(); ++v) worst = std::max(worst, std::abs(a[t][v].get<double>() - b[t][v].get<double>()));
    return worst;
  }

 private slots:
  void initTestCase() {
    hf_ = path("llama");
    QCOMPARE(QString::fromStdString(writeTinyFolder(tinyArchitectures()[2], hf_.toStdString())), QString());
    text_ = path("text.txt");
    writeTextFile(text_.toStdString(), fineTuneText());
  }

  void fineTunesSavesAndExportsBack() {
    const json original = logits(hf_);
    QVERIFY(original.is_array() && original.size() == 6);
    const Run train = runCli({"train", "--model", hf_, "--text", text_, "--steps", "3", "--set", "task.seq_len=16", "--set",
                              "train.lr=0.01", "--threads", "1", "--quiet", "--out", path("tuned")});
    QVERIFY2(train.exitCode == 0, train.err.constData());
    const json tuned = logits(path("tuned"));
    QVERIFY(tuned.is_array() && tuned.size() == 6);
    QVERIFY(maxDifference(tuned, original) > 1e-3);  // trained

    const Run exported = runCli({"export-hf", "--model", path("tuned"), "--out", path("exported")});
    QVERIFY2(exported.exitCode == 0, exported.err.constData());
    QVERIFY(QFile::exists(path("exported/merges.txt")));
    QVERIFY(maxDifference(logits(path("exported")), tuned) < 1e-5);

    // The checkpoint continues from its own folder like any lab run.
    QFile config(path("tuned/config.json"));
    QVERIFY(config.open(QIODevice::ReadOnly));
    const json saved = json::parse(config.readAll().toStdString());
    QCOMPARE(saved["task"]["tokenizer"].get<std::string>(), std::string("pretrained"));  // its own copy
    QVERIFY(QFile::exists(path("tuned/pretrained/config.json")) && QFile::exists(path("tuned/pretrained/merges.txt")));
    QCOMPARE(saved["train"]["steps"].get<int>(), 3);
  }

  void zeroStepsSavesTheModelAsItIs() {
    const Run save = runCli({"train", "--model", hf_, "--text", text_, "--steps", "0", "--out", path("as_is")});
    QVERIFY2(save.exitCode == 0, save.err.constData());
    QVERIFY(save.out.contains("not trained"));
    QVERIFY(maxDifference(logits(path("as_is")), logits(hf_)) < 1e-6);
  }

  void theCheckpointOutlivesItsSourceFolder() {
    const QString source = path("moved_away");
    QCOMPARE(QString::fromStdString(writeTinyFolder(tinyArchitectures()[2], source.toStdString())), QString());
    const Run stopped = runCli({"train", "--model", source, "--text", text_, "--steps", "2", "--stop-at", "1", "--set",
                                "task.seq_len=16", "--threads", "1", "--quiet", "--out", path("orphan")});
    QVERIFY2(stopped.exitCode == 0, stopped.err.constData());
    const Run before = runCli({"tokenize", "--model", source, "--text", "Hello there", "--json"});
    QVERIFY(QDir(source).removeRecursively());

    const Run after = runCli({"tokenize", "--model", path("orphan"), "--text", "Hello there", "--json"});
    QVERIFY2(after.exitCode == 0, after.err.constData());
    QCOMPARE(after.out, before.out);
    // Resuming saves back into the folder that holds the copy it reads.
    const Run resumed = runCli({"train", "--resume", path("orphan"), "--quiet"});
    QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
    QVERIFY(QFile::exists(path("orphan/pretrained/tensors.json")));
    const json orphan = logits(path("orphan"));
    QVERIFY(orphan.is_array() && orphan.size() == 6);
    const Run exported = runCli({"export-hf", "--model", path("orphan"), "--out", path("orphan_exported")});
    QVERIFY2(exported.exitCode == 0, exported.err.constData());
    QVERIFY(maxDifference(logits(path("orphan_exported")), orphan) < 1e-5);
  }

  void badRequestsSayWhyInOneLine() {
    auto refused = [&](const QStringList& args, const char* needle) {
      const Run r = runCli(args);
      QVERIFY2(r.exitCode != 0 && r.err.contains(needle) && r.err.trimmed().count('\n') == 0, r.err.constData());
    };
    refused({"train", "--model", path("nowhere"), "--text", text_, "--out", path("x")}, "not a Hugging Face model folder");
    refused({"train", "--model", hf_, "--preset", "default", "--text", text_, "--out", path("x")}, "do not go with it");
    refused({"train", "--model", hf_, "--text", path("missing.txt"), "--out", path("x")}, "no such file");
    refused({"train", "--model", hf_, "--out", path("x")}, "--text");
    refused({"train", "--model", hf_, "--text", text_, "--set", "train.batch=0", "--out", path("x")}, "train.batch");
  }
};

QTEST_GUILESS_MAIN(HfFinetuneCliTest)
#include "test_hf_finetune_cli.moc"
