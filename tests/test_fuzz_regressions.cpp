// One case per defect the fuzz targets (tests/fuzz, scripts/fuzz.sh) or the sanitizers found in a
// reader of outside files, each the smallest input that showed it. Several were undefined behaviour
// that only the sanitizer build (scripts/test-sanitizers.sh, run by CI) turns into a failure; the
// rest fail here in any build.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "core/params.h"
#include "hf/tensor_file.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "tiny_hf_folder.h"
#include "tokenizer/tokenizer_files.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
void write(const fs::path& file, const std::string& bytes) { std::ofstream(file, std::ios::binary) << bytes; }
// A safetensors file: the 8-byte little-endian header length, then the header.
std::string safetensors(const std::string& header) {
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return bytes + header;
}

}  // namespace

class TestFuzzRegressions : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  fs::path dir(const char* name) const { return fs::path(tmp_.path().toStdString()) / name; }

 private slots:
  // tokenizer_config.json's added_tokens_decoder was iterated through a temporary that had already
  // been destroyed (AddressSanitizer: stack-use-after-scope, found by the seed writer).
  void addedTokensDecoderIsRead() {
    const fs::path folder = dir("decoder");
    QCOMPARE(q(tiny_hf::writeGpt2Folder(folder)), QString());
    write(folder / "tokenizer_config.json",
          "{\"added_tokens_decoder\": {\"259\": {\"content\": \"<|pad|>\", \"special\": true}}, \"bos_token\": \"<|endoftext|>\"}");
    std::string why;
    const std::unique_ptr<Tokenizer> tokenizer = loadTokenizer(folder.string(), why);
    QVERIFY2(tokenizer, why.c_str());
    std::vector<int> ids;
    QCOMPARE(q(tokenizer->encode("a<|pad|>", ids)), QString());
    QVERIFY2(std::find(ids.begin(), ids.end(), 259) != ids.end(), "the added token is one id");
  }

  // Its keys went through atoi, undefined for a number past int; a key that is no id is refused.
  void addedTokensDecoderKeysAreIds() {
    const fs::path folder = dir("keys");
    QCOMPARE(q(tiny_hf::writeGpt2Folder(folder)), QString());
    for (const char* key : {"99999999999999999999", "-3", "x"}) {
      write(folder / "tokenizer_config.json",
            std::string("{\"added_tokens_decoder\": {\"") + key + "\": {\"content\": \"<|pad|>\"}}}");
      std::string why;
      QVERIFY(!loadTokenizer(folder.string(), why));
      QVERIFY2(q(why).contains(QString("added_tokens_decoder key '%1' is not a token id").arg(key)), why.c_str());
    }
  }

  // A preset name or --set text that is not UTF-8 threw from the JSON printer quoting it in the
  // message, ending attnlab-cli and the tour reader (fuzz_cli_flags, fuzz_tour).
  // A JSON number beyond a double's range (70E8181111527, found by fuzz_config_lab) made the JSON
  // library throw out_of_range where the readers caught only its syntax errors: the exception ended
  // the program. Each reader that parses with exceptions now refuses it in one line.
  void numbersBeyondADoubleAreRefused() {
    ExperimentConfig config;
    for (const char* text : {"70E8181111527", "{\"model\": {\"d_model\": 1e400}}"}) {
      const std::string why = configFromJson(text, config);
      QVERIFY2(q(why).contains("not valid JSON") && q(why).contains("number overflow"), why.c_str());
    }
    const std::string header = R"({"w": {"dtype": "F32", "shape": [1e400], "data_offsets": [0, 4]}})";
    write(dir("lab.safetensors"), safetensors(header));
    ParamStore params;
    const std::string lab = readSafetensors(dir("lab.safetensors").string(), params);
    QVERIFY2(q(lab).contains("not valid JSON") && q(lab).contains("number overflow"), lab.c_str());
    write(dir("hf.safetensors"), safetensors(header));
    std::vector<hf::TensorEntry> entries;
    const std::string hfWhy = hf::readTensorHeader(dir("hf.safetensors").string(), entries);
    QVERIFY2(q(hfWhy).contains("not valid JSON") && q(hfWhy).contains("number overflow"), hfWhy.c_str());
    fs::create_directories(dir("sharded"));
    write(dir("sharded") / "model.safetensors.index.json", R"({"metadata": {"total_size": 1e400}, "weight_map": {}})");
    std::vector<std::string> files;
    QVERIFY(q(hf::readShardIndex(dir("sharded").string(), files)).contains("not valid JSON"));
  }

  void textThatIsNotUtf8IsQuoted() {
    ExperimentConfig config;
    const std::string why = loadPreset("i\x88" "duction", config);
    QVERIFY2(q(why).contains("unknown preset \"i\uFFFDduction\""), why.c_str());
    QVERIFY(!applyOverride(config, "model.d_model=3\xff").empty());
    QCOMPARE(q(applyOverride(config, "model.positional=r\xc3")), QString());  // names are checked by validate()
    QVERIFY(q(validate(config)).contains("r\uFFFD"));
  }
};

QTEST_APPLESS_MAIN(TestFuzzRegressions)
#include "test_fuzz_regressions.moc"
