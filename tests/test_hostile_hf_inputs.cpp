// Hugging Face folders made to hurt the reader (as test_hostile_inputs does for the lab's own
// files): each is refused with a one-line message before anything it would cost is allocated.
// Header lengths near 2^64, offsets that overflow, shapes whose product overflows, JSON nested
// 100,000 deep in every JSON file of a folder, a vocabulary or model larger than memory, a shard
// index naming ../ or absolute paths, and symbolic links out of the folder. Also run under the
// sanitizers (scripts/test-sanitizers.sh).
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "core/available_memory.h"
#include "hf/hf_model.h"
#include "hf/tensor_file.h"
#include "io/checkpoint.h"
#include "tiny_hf_folder.h"
#include "tokenizer/tokenizer_files.h"
#include "train/memory_estimate.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

std::string lengthPrefix(uint64_t n) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return bytes;
}

std::string nested(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

void write(const fs::path& file, const std::string& bytes) { std::ofstream(file, std::ios::binary) << bytes; }

void expectContains(const std::string& why, const QString& expected) {
  QVERIFY2(q(why).contains(expected), qPrintable("message was: " + q(why)));
  QVERIFY2(!q(why).contains('\n'), qPrintable("not one line: " + q(why)));
}

}  // namespace

class TestHostileHfInputs : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  fs::path dir(const char* name) const { return fs::path(tmp_.path().toStdString()) / name; }

 private slots:
  void safetensorsHeadersAreCheckedBeforeUse_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const auto entry = [](const std::string& shape, const std::string& offsets) {
      return "{\"w\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}";
    };
    const auto row = [](const char* name, const std::string& bytes, const char* expected) {
      QTest::newRow(name) << QByteArray::fromStdString(bytes) << QString(expected);
    };
    const auto file = [](const std::string& header, size_t data, uint64_t claimed = 0) {
      return lengthPrefix(claimed ? claimed : header.size()) + header + std::string(data, '\0');
    };
    row("header length 2^64 - 1", file("{}", 0, UINT64_MAX), "header length 18446744073709551615 exceeds the file size 10");
    row("header length 2^64 - 8", file("{}", 0, UINT64_MAX - 7), "exceeds the file size");
    row("end offset 2^64 - 1", file(entry("[4]", "[0,18446744073709551615]"), 16), "beyond the 16-byte data section");
    row("offsets that wrap", file(entry("[4]", "[18446744073709551600,18446744073709551615]"), 16), "beyond the 16-byte data section");
    row("reversed offsets", file(entry("[4]", "[16,0]"), 16), "reversed data_offsets [16, 0]");
    row("shape whose product overflows", file(entry("[1099511627776,1099511627776,1099511627776]", "[0,16]"), 16), "whose size overflows");
    row("dimension beyond 2^40", file(entry("[18446744073709551615]", "[0,16]"), 16), "malformed shape");
    row("bytes that overflow", file(entry("[2147483648,2147483648]", "[0,16]"), 16), "spans 16 bytes but its shape");
    row("header nested 100,000 deep", file("{\"w\":" + nested(100000) + "}", 0), "header JSON nested deeper than 64 levels");
  }
  void safetensorsHeadersAreCheckedBeforeUse() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    const fs::path file = dir("hostile.safetensors");
    write(file, bytes.toStdString());
    std::vector<hf::TensorEntry> entries;
    expectContains(hf::readTensorHeader(file.string(), entries), expected);
    QVERIFY(entries.empty());
  }

  // Every JSON file an opened folder holds, nested 100,000 deep: the printer that quotes a bad value
  // in a message would recurse once per level and overflow the stack.
  void deeplyNestedJsonIsRefusedInEveryFile_data() {
    QTest::addColumn<QString>("file");
    for (const char* f : {"config.json", "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json"})
      QTest::newRow(f) << QString(f);
  }
  void deeplyNestedJsonIsRefusedInEveryFile() {
    QFETCH(QString, file);
    const fs::path folder = dir(("deep-" + file.toStdString()).c_str());
    QCOMPARE(q(tiny_hf::writeGpt2Folder(folder)), QString());
    const std::string deep = "{\"model_type\": \"gpt2\", \"x\": " + nested(100000) + "}";
    write(folder / file.toStdString(), deep);
    std::string why;
    if (file.startsWith("tokenizer")) {
      loadTokenizer(folder.string(), why);
    } else {
      hf::HfModelInfo info;
      why = hf::readHfInfo(folder.string(), info);
    }
    expectContains(why, file + ": JSON nested deeper than 64 levels");
    QVERIFY(!hf::isHfFolder(folder.string()) || file != "config.json");

    TokenizerSpec spec;  // the vocab.json of the GPT-2 pair
    expectContains(parseVocabAndMerges(nested(100000), "", "vocab.json", spec), "vocab.json: JSON nested deeper than 64 levels");
  }

  // A config.json of a billion tokens by 16384 wide: the estimate refuses it before one weight.
  void aModelLargerThanMemoryIsRefusedBeforeLoading() {
    const fs::path folder = dir("huge-model");
    QCOMPARE(q(tiny_hf::writeGpt2Folder(folder)), QString());
    write(folder / "config.json",
          "{\"model_type\": \"gpt2\", \"vocab_size\": 1000000000, \"n_embd\": 16384, \"n_layer\": 2, \"n_head\": 16, \"n_positions\": 64}");
    std::unique_ptr<Model> model;
    hf::HfModelInfo info;
    const std::string why = hf::openHfModel(folder.string(), model, info);
    expectContains(why, "the model needs about");
    expectContains(why, "of memory are free");
    QVERIFY(!model);
    // The figure is the engine's one estimate of an opening (weights, KV cache, one forward) at its tokens.
    InferenceEstimate need;
    QCOMPARE(q(estimateInference(info.config, std::min(info.config.context, kOpeningTokens), false, need)), QString());
    expectContains(why, q("the model needs about " + memoryText(need.totalBytes()) + " ("));
    expectContains(why, "at 64 tokens");

    // Sizes whose product passes 2^64 (about 1e28 parameters) would wrap the estimate to a small number.
    write(folder / "config.json",
          "{\"model_type\": \"gpt2\", \"vocab_size\": 1073741824, \"n_embd\": 1073741824, \"n_layer\": 1073741824, \"n_head\": 1}");
    expectContains(hf::openHfModel(folder.string(), model, info), "parameters, more than any machine holds");
    QVERIFY(!model);
  }

  // A vocabulary claiming ids far beyond its entries: refused by its id, not resized to it.
  void aVocabularyLargerThanMemoryIsRefused() {
    TokenizerSpec spec;
    expectContains(parseVocabAndMerges("{\"a\": 0, \"b\": 9223372036854775807}", "", "vocab.json", spec), "token 'b' has no valid id");
    expectContains(parseVocabAndMerges("{\"a\": 0, \"b\": 4000000000}", "", "vocab.json", spec), "token 'b' has no valid id");
    QVERIFY(spec.vocab.size() < 100);
  }

  void aShardIndexMayNotLeaveTheFolder_data() {
    QTest::addColumn<QString>("shard");
    QTest::newRow("../") << "../outside.safetensors";
    QTest::newRow("inner ../") << "sub/../../outside.safetensors";
    QTest::newRow("absolute") << "/etc/passwd";
    QTest::newRow("empty") << "";
  }
  void aShardIndexMayNotLeaveTheFolder() {
    QFETCH(QString, shard);
    const fs::path folder = dir("sharded");
    QCOMPARE(q(tiny_hf::writeGpt2Folder(folder)), QString());
    write(dir("outside.safetensors"), "");
    fs::rename(folder / "model.safetensors", folder / "model-00001-of-00001.safetensors");
    write(folder / "model.safetensors.index.json",
          "{\"weight_map\": {\"wte.weight\": \"model-00001-of-00001.safetensors\", \"wpe.weight\": \"" + shard.toStdString() + "\"}}");
    std::vector<std::string> files;
    expectContains(hf::readShardIndex(folder.string(), files), "is outside the model folder (refused)");
  }

  // A folder whose files (or shards) link out of it is refused; a Hugging Face cache snapshot, whose
  // files link into its repository's blobs/, opens.
  void symbolicLinksOutOfTheFolderAreRefused() {
    const fs::path elsewhere = dir("elsewhere");
    QCOMPARE(q(tiny_hf::writeGpt2Folder(elsewhere)), QString());
    for (const char* file : {"config.json", "model.safetensors", "tokenizer.json"}) {
      const fs::path folder = dir((std::string("linked-") + file).c_str());
      QCOMPARE(q(tiny_hf::writeGpt2Folder(folder)), QString());
      fs::remove(folder / file);
      fs::create_symlink(elsewhere / file, folder / file);
      hf::HfModelInfo info;
      const std::string why = hf::readHfInfo(folder.string(), info);
      expectContains(why, q((folder / file).string()) + ": a symbolic link to " + q((elsewhere / file).string()));
      expectContains(why, "outside the folder (refused)");
      std::string tokenizerWhy;
      QVERIFY(!loadTokenizer(folder.string(), tokenizerWhy));
      expectContains(tokenizerWhy, "outside the folder (refused)");
    }
    // A link to a folder outside, and a link through a linked folder, are outside too.
    const fs::path viaFolder = dir("linked-folder");
    QCOMPARE(q(tiny_hf::writeGpt2Folder(viaFolder)), QString());
    fs::create_symlink(elsewhere, viaFolder / "more");
    hf::HfModelInfo info;
    expectContains(hf::readHfInfo(viaFolder.string(), info), "more: a symbolic link to");

    // The cache layout: snapshots/REV/* -> ../../blobs/HASH.
    const fs::path repo = dir("hub") / "models--tiny--gpt2";
    const fs::path snapshot = repo / "snapshots" / "0123abcd";
    QCOMPARE(q(tiny_hf::writeGpt2Folder(repo / "staging")), QString());
    fs::create_directories(repo / "blobs");
    fs::create_directories(snapshot);
    int blob = 0;
    for (const auto& entry : fs::directory_iterator(repo / "staging")) {
      const std::string hash = "blob" + std::to_string(blob++);
      fs::rename(entry.path(), repo / "blobs" / hash);
      fs::create_symlink(fs::path("../../blobs") / hash, snapshot / entry.path().filename());
    }
    std::unique_ptr<Model> model;
    QCOMPARE(q(hf::openHfModel(snapshot.string(), model, info)), QString());
    QVERIFY(model);
    // The cache's blobs/ is the only way out a snapshot has.
    fs::create_symlink(elsewhere / "tokenizer.json", snapshot / "vocab.json");
    expectContains(hf::readHfInfo(snapshot.string(), info), "outside the folder (refused)");
  }

  // The lab's own checkpoint folder: the same rule.
  void aCheckpointLinkingOutIsRefused() {
    const fs::path elsewhere = dir("elsewhere-history.csv");
    write(elsewhere, "step,loss\n");
    const fs::path folder = dir("checkpoint");
    fs::create_directories(folder);
    write(folder / "config.json", "{}");
    fs::create_symlink(elsewhere, folder / "history.csv");
    LoadedCheckpoint loaded;
    expectContains(loadCheckpoint(folder.string(), loaded), "history.csv: a symbolic link to");
    QVERIFY(!loaded.trainer);
  }
};

QTEST_APPLESS_MAIN(TestHostileHfInputs)
#include "test_hostile_hf_inputs.moc"
