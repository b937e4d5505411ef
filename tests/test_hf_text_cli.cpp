// A Hugging Face folder's tokenizer behind --text: trace, eval and generate read text through it
// (with the BOS tokenizer_config.json asks for), the ids equal `tokenize --model --special`, trace
// labels are the display forms, and a folder without tokenizer files says so in one line.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "tiny_hf_folder.h"

using nlohmann::json;

class HfTextCliTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString dir_;

  static json parse(const Run& r) { return json::parse(r.out.toStdString()); }

 private slots:
  void initTestCase() {
    dir_ = tmp_.path() + "/gpt2";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir_.toStdString())), QString());
  }

  void traceIdsEqualTokenizeIds() {
    const QString text = "a wo wow";
    const Run tok = runCli({"tokenize", "--model", dir_, "--text", text, "--special", "--json"});
    QVERIFY2(tok.exitCode == 0, tok.err.constData());
    const std::vector<int> expected = parse(tok)["ids"].get<std::vector<int>>();
    QCOMPARE(expected.front(), tiny_hf::kBos);
    QCOMPARE(expected, (std::vector<int>{tiny_hf::kBos, 'a', 257, 257, 'w'}));

    const QString out = tmp_.path() + "/trace.json";
    const Run trace = runCli({"trace", "--model", dir_, "--text", text, "--out", out});
    QVERIFY2(trace.exitCode == 0, trace.err.constData());
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const json t = json::parse(f.readAll().toStdString());
    QCOMPARE(t["ids"].get<std::vector<int>>(), expected);
    QCOMPARE(t["labels"][0].get<std::string>(), std::string("<|endoftext|>"));
    QCOMPARE(t["labels"][2].get<std::string>(), std::string("\u2423wo"));
    QCOMPARE(t["layers"].size(), size_t(2));
  }

  void evalAndGenerateTakeText() {
    const Run eval = runCli({"eval", "--model", dir_, "--text", "a wo wow", "--json"});
    QVERIFY2(eval.exitCode == 0, eval.err.constData());
    QCOMPARE(parse(eval)["tokens"].get<int>(), 4);  // 5 ids with the BOS, 4 scored predictions
    const Run ids = runCli({"eval", "--model", dir_, "--ids", "258,97,257,257,119", "--json"});
    QVERIFY2(ids.exitCode == 0, ids.err.constData());
    QCOMPARE(parse(ids)["loss"].get<double>(), parse(eval)["loss"].get<double>());

    const Run gen = runCli({"generate", "--model", dir_, "--prompt", "a wo", "--tokens", "3", "--temperature", "0", "--json"});
    QVERIFY2(gen.exitCode == 0, gen.err.constData());
    const json g = parse(gen);
    QCOMPARE(g["prompt_tokens"].get<std::vector<int>>(), (std::vector<int>{tiny_hf::kBos, 'a', 257}));
    QCOMPARE(g["tokens"].size(), size_t(3));
    QCOMPARE(g["labels"].size(), size_t(3));
  }

  void folderWithoutTokenizerSaysSo() {
    const QString bare = tmp_.path() + "/bare";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(bare.toStdString())), QString());
    std::filesystem::remove((bare + "/tokenizer.json").toStdString());
    const Run r = runCli({"trace", "--model", bare, "--text", "a", "--out", tmp_.path() + "/x.json"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--text needs the folder's tokenizer") && r.err.count('\n') == 1, r.err.constData());
    const Run ids = runCli({"trace", "--model", bare, "--ids", "1,2", "--out", tmp_.path() + "/x.json"});
    QVERIFY2(ids.exitCode == 0, ids.err.constData());
  }
};

QTEST_MAIN(HfTextCliTest)
#include "test_hf_text_cli.moc"
