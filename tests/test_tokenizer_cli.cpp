// attnlab-cli tokenize: ids and display strings from a model folder or a tokenizer file, as text
// and JSON, and one-line messages for a missing tokenizer, bad flags and invalid UTF-8.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/unicode_classes.h"

using nlohmann::json;

class TokenizerCliTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    // 256 byte tokens, then "Ġw" (256), "Ġwo" (257); "<|endoftext|>" (258) named in tokenizer_config.json.
    json vocab = json::object();
    for (int b = 0; b < 256; ++b) vocab[attnlab::encodeCodePoint(attnlab::byteToCodePoint(static_cast<unsigned char>(b)))] = b;
    vocab["Ġw"] = 256;
    vocab["Ġwo"] = 257;
    vocab["<|endoftext|>"] = 258;
    const std::string d = dir_.path().toStdString();
    std::ofstream(d + "/vocab.json") << vocab.dump();
    std::ofstream(d + "/merges.txt") << "#version: 0.2\nĠ w\nĠw o\n";
    std::ofstream(d + "/tokenizer_config.json") << R"({"eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>"})";
  }

  void textAndJson() {
    const Run text = runCli({"tokenize", "--model", dir_.path(), "--text", "a wo\n<|endoftext|>"});
    QVERIFY2(text.exitCode == 0, text.err.constData());
    QVERIFY2(text.out.contains("4 tokens"), text.out.constData());
    QVERIFY2(text.out.contains("257  \u2423wo"), text.out.constData());
    QVERIFY2(text.out.contains("258  <|endoftext|>"), text.out.constData());

    const Run j = runCli({"tokenize", "--tokenizer", dir_.path() + "/vocab.json", "--text", "a wo", "--json"});
    QVERIFY2(j.exitCode == 0, j.err.constData());
    const json out = json::parse(j.out.toStdString());
    QCOMPARE(out["ids"].get<std::vector<int>>(), (std::vector<int>{'a', 257}));  // byte tokens keep the byte's id here
    QCOMPARE(out["tokens"][1].get<std::string>(), std::string("Ġwo"));
    QCOMPARE(out["display"][1].get<std::string>(), std::string("\u2423wo"));
    QCOMPARE(out["eos"].get<int>(), 258);
    QCOMPARE(out["tokenizer"].get<std::string>(), std::string("byte_level_bpe"));
  }

  void failuresAreOneLine() {
    const Run none = runCli({"tokenize", "--model", dir_.path() + "/nothing", "--text", "x"});
    QCOMPARE(none.exitCode, 2);
    QVERIFY2(none.err.contains("no such file or folder") && none.err.count('\n') == 1, none.err.constData());
    const Run both = runCli({"tokenize", "--text", "x"});
    QCOMPARE(both.exitCode, 2);
    QVERIFY2(both.err.contains("exactly one of --model"), both.err.constData());
    // Raw bytes go through the shell: a QString argument would be re-encoded as valid UTF-8.
    const Run bad = runProgram("bash", {"-c", "\"$0\" tokenize --model \"$1\" --text \"$(printf '\\xc3(')\"", cliPath(), dir_.path()});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("not valid UTF-8 (byte 0xC3 at offset 0)"), bad.err.constData());
  }
};

QTEST_MAIN(TokenizerCliTest)
#include "test_tokenizer_cli.moc"
