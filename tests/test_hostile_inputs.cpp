// Files made to hurt the reader: each is refused with a one-line message before anything it would
// cost is allocated (sizes near 2^64, offsets that overflow, shapes whose product overflows, a
// model larger than memory, JSON nested 100,000 deep, a file larger than anything the lab writes,
// a device that never ends). Run under the sanitizers too (scripts/test-sanitizers.sh).
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "io/checkpoint.h"
#include "io/comparison_file.h"
#include "io/config_json.h"
#include "core/available_memory.h"
#include "core/files.h"
#include "core/json_limits.h"
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

// A safetensors file with `header` and `dataBytes` zero bytes of data; the length is the header's
// unless `claimedLength` is given.
std::string safetensors(const std::string& header, size_t dataBytes, uint64_t claimedLength = 0) {
  return lengthPrefix(claimedLength ? claimedLength : header.size()) + header + std::string(dataBytes, '\0');
}

std::string nested(const std::string& open, const std::string& close, int depth, const std::string& inner = "1") {
  std::string text;
  text.reserve(depth * (open.size() + close.size()) + inner.size());
  for (int i = 0; i < depth; ++i) text += open;
  text += inner;
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

void expectContains(const std::string& why, const QString& expected) {
  QVERIFY2(q(why).contains(expected), qPrintable("message was: " + q(why)));
}

}  // namespace

class TestHostileInputs : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

  static void write(const std::string& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary) << bytes;
  }

 private slots:
  void safetensorsSizesAndOffsetsAreCheckedBeforeUse_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    const auto entry = [](const std::string& shape, const std::string& offsets) {
      return "{\"w\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}";
    };
    const auto row = [](const char* name, const std::string& bytes, const char* expected) {
      QTest::newRow(name) << QByteArray::fromStdString(bytes) << QString(expected);
    };
    row("header length 2^64 - 1", safetensors("{}", 0, UINT64_MAX), "header length 18446744073709551615 exceeds the 100 MB limit");
    row("header length 2^64 - 8", safetensors("{}", 0, UINT64_MAX - 7), "exceeds the 100 MB limit");
    row("header length past the file", safetensors("{}", 0, 3), "header length 3 exceeds the file size 10");
    row("end offset 2^64 - 1", safetensors(entry("[2,2]", "[0,18446744073709551615]"), 16),
        "data_offsets [0, 18446744073709551615] outside the 16-byte data section");
    row("offsets that wrap past 2^64", safetensors(entry("[2,2]", "[18446744073709551600,18446744073709551615]"), 16),
        "outside the 16-byte data section");
    row("offsets beyond 64 bits", safetensors(entry("[2,2]", "[0,1e30]"), 16), "malformed data_offsets");
    row("negative offset", safetensors(entry("[2,2]", "[-16,0]"), 16), "malformed data_offsets");
    row("shape whose product overflows 64 bits", safetensors(entry("[4294967296,4294967296,16]", "[0,16]"), 16),
        "has shape [4294967296, 4294967296, 16], expected [2, 2]");
    row("dimension of 2^64 - 1", safetensors(entry("[18446744073709551615]", "[0,16]"), 16),
        "has shape [18446744073709551615], expected [2, 2]");
    row("dimension beyond 64 bits", safetensors(entry("[1e30,1]", "[0,16]"), 16), "malformed shape");
    row("header nested 100,000 deep", safetensors(nested("{\"w\":", "}", 100000), 0),
        "header JSON nested deeper than 64 levels");
    row("metadata nested 100,000 deep", safetensors("{\"__metadata__\":" + nested("[", "]", 100000) + "}", 0),
        "header JSON nested deeper than 64 levels");
  }
  void safetensorsSizesAndOffsetsAreCheckedBeforeUse() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    const std::string file = path("hostile.safetensors");
    write(file, bytes.toStdString());
    ParamStore params;
    params.add("w", {2, 2}).value.setConstant(7.0f);
    expectContains(readSafetensors(file, params), expected);
    QCOMPARE(params.find("w")->value(1, 1), 7.0f);  // untouched
  }

  void deeplyNestedJsonIsRefusedEverywhere() {
    ExperimentConfig config;
    for (const std::string& text : {nested("{\"model\":", "}", 100000), nested("[", "]", 100000)})
      expectContains(configFromJson(text, config), "JSON nested deeper than 64 levels");
    ComparisonDocument comparison;
    expectContains(comparisonFromJson(nested("[", "]", 100000), comparison),
                   "not a comparison file: JSON nested deeper than 64 levels");
    // Brackets inside strings are text, not nesting; 64 levels are allowed.
    QCOMPARE(q(checkJsonDepth("{\"description\": \"" + std::string(1000, '[') + "\"}")), QString());
    QCOMPARE(q(checkJsonDepth(nested("[", "]", 64))), QString());
    QVERIFY(!checkJsonDepth(nested("[", "]", 65)).empty());
    QCOMPARE(q(checkJsonDepth("{\"a\": \"\\\"[[[[\", \"b\": [1]}", 2)), QString());  // an escaped quote stays in the string
  }

  // A saved config.json asking for a vocabulary of two billion (tied: 2e9 x 128 x 4 bytes = 953.7 GiB of
  // weights, three times that held for training on): refused from config.json alone,
  // before a tensor is read (the folder has no weights file to read) or the model is built.
  void aModelLargerThanMemoryIsRefusedBeforeItIsBuilt() {
    ExperimentConfig config;
    config.model.vocab = 2'000'000'000;
    const fs::path folder = path("huge");
    fs::create_directories(folder);
    write((folder / "config.json").string(), configToJson(config));
    LoadedCheckpoint loaded;
    QElapsedTimer clock;
    clock.start();
    const std::string why = loadCheckpoint(folder.string(), loaded);
    QVERIFY2(clock.elapsed() < 500, qPrintable(QString::number(clock.elapsed()) + " ms"));
    expectContains(why, "config.json: opening this checkpoint needs about");
    expectContains(why, "(weights 953.7 GiB, their gradients and AdamW moments 2.8 TiB, KV cache");
    expectContains(why, "is available");
    QVERIFY(!loaded.trainer);

    // Every size at validate()'s limit, against 1 GiB: 160 GiB of weights alone, 640 GiB held.
    config.model.vocab = 50000;
    config.model.d_model = 4096;
    config.model.n_layers = 64;
    config.model.d_ff = 16384;
    config.model.n_heads = 32;
    write((folder / "config.json").string(), configToJson(config));
    const AssumedAvailableMemory oneGiB(1ull << 30);
    expectContains(loadCheckpoint(folder.string(), loaded), "; 1.0 GiB is available");
    QVERIFY(!loaded.trainer);
  }

  // A history.csv of 2 GiB (sparse: it costs no disk) is refused by its size, not read.
  void aFileLargerThanTheLabWritesIsNotRead() {
    const std::string file = path("huge-history.csv");
    write(file, "step,loss\n");
    fs::resize_file(file, 2ull << 30);
    std::vector<TrainPoint> history;
    expectContains(readHistoryCsv(file, history), "2147483648 bytes is more than the 1024 MiB");
    ComparisonDocument comparison;
    expectContains(readComparisonFile(file, comparison), "is more than the 1024 MiB");
  }

  // A device that never ends (or a folder) named as a config file is refused, not read forever.
  void aDeviceIsNotAFile() {
    std::string bytes;
    expectContains(readWholeFile("/dev/zero", bytes), "/dev/zero: not a regular file");
    expectContains(readWholeFile(dir_.path().toStdString(), bytes), "not a regular file");
  }
};

QTEST_APPLESS_MAIN(TestHostileInputs)
#include "test_hostile_inputs.moc"
