// The pieces of a checkpoint, tested without a model: safetensors weights (round trip and
// hundreds of damaged files), history.csv, and the atomic file write.
#include <QTemporaryDir>
#include <QtTest>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "io/checkpoint.h"

using namespace attnlab;
using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

namespace QTest {
template <>
inline char* toString(const std::string& s) {
  return qstrdup(s.c_str());
}
}  // namespace QTest

namespace {

// The shapes a model has (matrices, vectors, a 3-D tensor, one element, no elements), named like it.
const std::vector<std::pair<std::string, std::vector<int>>> kShapes = {
    {"tok_emb.weight", {11, 6}},
    {"blocks.0.ln1.weight", {6}},
    {"blocks.0.attn.wq.weight", {8, 6}},
    {"blocks.0.attn.wo.weight", {6, 8}},
    {"blocks.0.mlp.fc.bias", {5}},
    {"odd.cube", {2, 3, 4}},
    {"odd.single", {1}},
    {"odd.empty", {0}},
};

ParamStore emptyStore() {
  ParamStore store;
  for (const auto& [name, shape] : kShapes) store.add(name, shape);
  return store;
}

// Random values plus the awkward ones (signed zero, denormals, extremes) a byte-exact format must keep.
ParamStore filledStore() {
  ParamStore store = emptyStore();
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (auto& p : store.all())
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] = normal(gen);
  float* special = store.find("tok_emb.weight")->value.data();
  const float awkward[] = {-0.0f, std::numeric_limits<float>::denorm_min(), FLT_MAX, -FLT_MAX, FLT_MIN, 1e-38f, -3.0e-42f};
  std::copy(std::begin(awkward), std::end(awkward), special);
  return store;
}

bool sameBits(const ParamStore& a, const ParamStore& b) {
  if (a.all().size() != b.all().size()) return false;
  for (size_t i = 0; i < a.all().size(); ++i) {
    const Mat& x = a.all()[i]->value;
    const Mat& y = b.all()[i]->value;
    if (x.rows() != y.rows() || x.cols() != y.cols()) return false;
    if (x.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) != 0) return false;
  }
  return true;
}

// How many float values differ bitwise between two stores of the same shapes.
int differingValues(const ParamStore& a, const ParamStore& b) {
  int n = 0;
  for (size_t i = 0; i < a.all().size(); ++i)
    for (Eigen::Index j = 0; j < a.all()[i]->value.size(); ++j)
      n += std::memcmp(a.all()[i]->value.data() + j, b.all()[i]->value.data() + j, sizeof(float)) != 0;
  return n;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::remove(path);  // truncating in place would make ext4 flush to disk on every one of hundreds of files
  std::ofstream(path, std::ios::binary) << bytes;
}

uint64_t headerLength(const std::string& file) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(file[i])) << (8 * i);
  return n;
}

std::string withHeaderLength(std::string file, uint64_t n) {
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return file;
}

// A safetensors file from a header and data, the way another writer might produce one.
std::string assemble(const std::string& headerText, const std::string& data) {
  return withHeaderLength(std::string(8, '\0'), headerText.size()) + headerText + data;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

class TestCheckpointFiles : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string path(const char* name) const { return (dir_.path() + "/" + name).toStdString(); }

  // The reference file: its bytes, header and data section.
  std::string original_;
  Json header_;
  std::string data_;

  // Loads `bytes` as model.safetensors into a fresh store; returns the message ("" if accepted).
  std::string load(const std::string& bytes, ParamStore* loaded = nullptr) {
    const std::string file = path("model.safetensors");
    writeBytes(file, bytes);
    ParamStore fresh = emptyStore();
    std::string why = readSafetensors(file, fresh);
    if (loaded) *loaded = std::move(fresh);
    return why;
  }
  // Re-assembles the reference file after `edit` changes a copy of its header and data.
  std::string edited(const std::function<void(Json&, std::string&)>& edit) {
    Json header = header_;
    std::string data = data_;
    edit(header, data);
    return assemble(header.dump(), data);
  }
  void expectRejected(const std::string& bytes, const QString& expected) {
    const QString why = q(load(bytes));
    QVERIFY2(why.startsWith(q(path("model.safetensors") + ": ")), qPrintable("message was: " + why));
    QVERIFY2(why.contains(expected), qPrintable("message was: " + why));
    QVERIFY2(!why.contains('\n'), "messages are one line");
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QCOMPARE(q(writeSafetensors(path("reference.safetensors"), filledStore())), QString());
    original_ = readBytes(path("reference.safetensors"));
    const uint64_t n = headerLength(original_);
    header_ = Json::parse(original_.substr(8, n));
    data_ = original_.substr(8 + n);
  }

  void roundTripIsBitExact() {
    ParamStore loaded;
    QCOMPARE(q(load(original_, &loaded)), QString());
    QVERIFY(sameBits(loaded, filledStore()));
  }

  void headerIsAsDocumented() {
    const uint64_t n = headerLength(original_);
    QCOMPARE((8 + n) % 8, uint64_t(0));  // data aligned to 8 bytes, header padded with spaces
    QCOMPARE(header_["__metadata__"], Json({{"format", "attnlab"}}));
    QCOMPARE(header_.size(), kShapes.size() + 1);
    const ParamStore store = filledStore();
    uint64_t offset = 0;
    for (const auto& [name, shape] : kShapes) {
      const Json& entry = header_[name];
      QCOMPARE(entry["dtype"].get<std::string>(), std::string("F32"));
      QCOMPARE(entry["shape"].get<std::vector<int>>(), shape);
      const auto offsets = entry["data_offsets"].get<std::vector<uint64_t>>();
      QCOMPARE(offsets.size(), size_t(2));
      QCOMPARE(offsets[0], offset);  // written in store order, back to back
      const Mat& value = store.find(name)->value;
      QCOMPARE(offsets[1] - offsets[0], uint64_t(value.size() * 4));
      // Row-major little-endian floats, exactly the bytes PyTorch would hold for this shape.
      QCOMPARE(data_.substr(offsets[0], value.size() * 4), std::string(reinterpret_cast<const char*>(value.data()), value.size() * 4));
      offset = offsets[1];
    }
    QCOMPARE(uint64_t(data_.size()), offset);
  }

  void foreignLayoutIsAccepted() {
    // Another writer may order tensors differently, omit metadata and skip padding.
    std::string data;
    Json header = Json::object();
    for (auto it = kShapes.rbegin(); it != kShapes.rend(); ++it) {
      const auto offsets = header_[it->first]["data_offsets"].get<std::vector<uint64_t>>();
      header[it->first] = {{"dtype", "F32"}, {"shape", it->second}, {"data_offsets", {data.size(), data.size() + offsets[1] - offsets[0]}}};
      data += data_.substr(offsets[0], offsets[1] - offsets[0]);
    }
    ParamStore loaded;
    QCOMPARE(q(load(assemble(header.dump(), data), &loaded)), QString());
    QVERIFY(sameBits(loaded, filledStore()));
  }

  void craftedFilesAreRejected() {
    const std::string wq = "blocks.0.attn.wq.weight";
    expectRejected("", "too short");
    expectRejected(assemble("[]", ""), "header is not a JSON object");
    expectRejected(assemble("null", ""), "header is not a JSON object");
    expectRejected(assemble("\"weights\"", ""), "header is not a JSON object");
    expectRejected(assemble("{\"a\": 1}", ""), "unexpected tensor a");
    expectRejected(assemble("{}", ""), "tensor tok_emb.weight is missing");
    expectRejected(assemble("{\"__metadata__\": 5}", ""), "__metadata__ must be an object of strings");
    expectRejected(assemble("{not json", data_), "header is not valid JSON");
    expectRejected(edited([](Json& h, std::string&) { h["__metadata__"]["format"] = 1; }), "__metadata__ must be an object of strings");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["dtype"] = "F16"; }),
                   "tensor " + q(wq) + " has dtype \"F16\", expected \"F32\"");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["dtype"] = "I32"; }), "has dtype \"I32\"");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["shape"] = {6, 8}; }),
                   "tensor " + q(wq) + " has shape [6, 8], expected [8, 6]");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["shape"] = {48}; }), "has shape [48], expected [8, 6]");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["shape"] = {8, -6}; }), "has a malformed shape");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["shape"] = "8x6"; }), "has a malformed shape");
    expectRejected(edited([&](Json& h, std::string&) { h.erase(wq); }), "tensor " + q(wq) + " is missing");
    expectRejected(edited([](Json& h, std::string& d) {
                     h["extra.weight"] = {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {d.size(), d.size() + 4}}};
                     d += std::string(4, '\0');
                   }),
                   "unexpected tensor extra.weight");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["layout"] = "rows"; }), "has an unknown field \"layout\"");
    expectRejected(edited([&](Json& h, std::string&) { h[wq].erase("dtype"); }), "has no dtype");
    expectRejected(edited([&](Json& h, std::string&) { h[wq] = 5; }), "has a malformed entry 5");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["data_offsets"] = {-4, 188}; }), "has malformed data_offsets");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["data_offsets"] = {0.0, 192.0}; }), "has malformed data_offsets");
    expectRejected(edited([&](Json& h, std::string&) { h[wq]["data_offsets"] = {4}; }), "has malformed data_offsets");
    expectRejected(edited([&](Json& h, std::string&) {
                     const auto o = h[wq]["data_offsets"].get<std::vector<uint64_t>>();
                     h[wq]["data_offsets"] = {o[1], o[0]};
                   }),
                   "has reversed data_offsets [480, 288]");
    expectRejected(edited([&](Json& h, std::string& d) { h[wq]["data_offsets"] = {d.size(), d.size() + 192}; }), "outside the");
    expectRejected(edited([&](Json& h, std::string&) {
                     const auto o = h[wq]["data_offsets"].get<std::vector<uint64_t>>();
                     h[wq]["data_offsets"] = {o[0], o[1] - 4};
                   }),
                   "spanning 188 bytes, expected 192 for shape [8, 6] in F32");
    expectRejected(edited([&](Json& h, std::string&) {  // shifted back onto the previous tensor
                     const auto o = h[wq]["data_offsets"].get<std::vector<uint64_t>>();
                     h[wq]["data_offsets"] = {o[0] - 4, o[1] - 4};
                   }),
                   "overlap");
    expectRejected(edited([&](Json& h, std::string&) {  // both claim the same bytes
                     h["blocks.0.attn.wo.weight"]["data_offsets"] = h[wq]["data_offsets"];
                   }),
                   "overlap");
    expectRejected(edited([](Json&, std::string& d) { d += "junk"; }), "belong to no tensor");
    expectRejected(edited([&](Json& h, std::string& d) {
                     const uint64_t begin = h[wq]["data_offsets"][0];
                     const float nan = std::numeric_limits<float>::quiet_NaN();
                     std::memcpy(d.data() + begin + 8, &nan, 4);
                   }),
                   "tensor " + q(wq) + " has NaN at element 2");
    expectRejected(edited([&](Json& h, std::string& d) {
                     const uint64_t begin = h["odd.single"]["data_offsets"][0];
                     const float inf = -std::numeric_limits<float>::infinity();
                     std::memcpy(d.data() + begin, &inf, 4);
                   }),
                   "tensor odd.single has an infinite value at element 0");
    expectRejected(withHeaderLength(original_, 200ull << 20), "exceeds the 100 MB limit");
    expectRejected(withHeaderLength(original_, ~0ull), "exceeds the 100 MB limit");
    expectRejected(withHeaderLength(original_, original_.size() - 7), "exceeds the file size");
  }

  void failedReadLeavesParamsUntouched() {
    ParamStore store = filledStore();
    writeBytes(path("model.safetensors"), edited([](Json& h, std::string&) { h["odd.single"]["dtype"] = "F64"; }));
    QVERIFY(!readSafetensors(path("model.safetensors"), store).empty());
    QVERIFY(sameBits(store, filledStore()));
  }

  void missingFileIsNamed() {
    ParamStore store = emptyStore();
    const QString why = q(readSafetensors(path("absent.safetensors"), store));
    QVERIFY2(why.startsWith(q(path("absent.safetensors"))), qPrintable(why));
  }

  void writerRejectsInconsistentParams() {
    ParamStore store;
    store.add("w", {3, 4}).value.resize(2, 2);
    const QString why = q(writeSafetensors(path("bad.safetensors"), store));
    QVERIFY2(why.contains("tensor w holds 4 values but its shape [3, 4] needs 12"), qPrintable(why));
    QVERIFY(!std::filesystem::exists(path("bad.safetensors")));
  }

  // Hundreds of damaged files: each is rejected with a message naming the file, except a byte
  // changed inside the data (or the optional metadata / padding), which is still a valid file.
  void damagedFilesNeverCrash() {
    const ParamStore reference = filledStore();
    const uint64_t n = headerLength(original_);
    const std::string headerText = original_.substr(8, n);
    const size_t metaBegin = 8 + headerText.find("\"__metadata__\":{") + std::strlen("\"__metadata__\":{");
    const size_t metaEnd = 8 + headerText.find('}');
    const size_t paddingBegin = 8 + headerText.find_last_not_of(' ') + 1;
    const std::string file = path("model.safetensors");
    size_t accepted = 0, rejected = 0;

    auto check = [&](const std::string& bytes, bool mayBeValid, const char* what, size_t where) {
      ParamStore loaded;
      const std::string why = load(bytes, &loaded);
      const QString context = QString("%1 at %2: %3").arg(what).arg(where).arg(q(why));
      if (why.empty()) {
        QVERIFY2(mayBeValid, qPrintable("accepted a damaged file: " + context));
        QVERIFY2(differingValues(loaded, reference) <= 1, qPrintable(context));
        ++accepted;
      } else {
        QVERIFY2(q(why).startsWith(q(file) + ": "), qPrintable(context));
        ++rejected;
      }
    };

    for (size_t length = 0; length < original_.size(); ++length) {
      check(original_.substr(0, length), false, "truncated", length);
      if (QTest::currentTestFailed()) return;
    }
    std::mt19937 gen(2024);
    for (int i = 0; i < 300; ++i) {
      // Half the flips hit the header (length field included), half the data.
      const bool inHeader = i % 2 == 0;
      const size_t pos = inHeader ? gen() % (8 + n) : 8 + n + gen() % data_.size();
      std::string bytes = original_;
      bytes[pos] = static_cast<char>(bytes[pos] ^ (1 + gen() % 255));
      const bool mayBeValid = !inHeader || (pos >= metaBegin && pos < metaEnd) || pos >= paddingBegin;
      check(bytes, mayBeValid, "byte flip", pos);
      if (QTest::currentTestFailed()) return;
    }
    for (uint64_t length : {uint64_t(0), uint64_t(1), n - 8, n - 1, n + 1, n + 8, n + 4 * 11, uint64_t(original_.size()),
                            uint64_t(original_.size() - 8), uint64_t(1) << 63}) {
      check(withHeaderLength(original_, length), false, "header length", length);
      if (QTest::currentTestFailed()) return;
    }
    QVERIFY(rejected > original_.size());
    QVERIFY(accepted > 50);  // most data flips leave finite numbers
  }

  void atomicWriteReplacesAndLeavesNoTemporaries() {
    QTemporaryDir folder;
    const std::string target = (folder.path() + "/notes.txt").toStdString();
    QCOMPARE(q(writeFileAtomic(target, "first version, rather long")), QString());
    QCOMPARE(readBytes(target), std::string("first version, rather long"));
    QCOMPARE(q(writeFileAtomic(target, "second")), QString());
    QCOMPARE(readBytes(target), std::string("second"));
    QCOMPARE(q(writeFileAtomic(target, "")), QString());
    QCOMPARE(readBytes(target), std::string());
    QCOMPARE(QDir(folder.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList{"notes.txt"});

    // Failures name the path and leave nothing behind.
    const std::string missingFolder = (folder.path() + "/no/such/folder/x.txt").toStdString();
    QVERIFY(q(writeFileAtomic(missingFolder, "x")).startsWith(q(missingFolder) + ": "));
    QVERIFY(QDir(folder.path()).mkdir("sub"));
    const std::string onFolder = (folder.path() + "/sub").toStdString();
    QVERIFY(q(writeFileAtomic(onFolder, "x")).startsWith(q(onFolder) + ": "));
    QCOMPARE(QDir(folder.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
             (QStringList{"notes.txt", "sub"}));
    QVERIFY(QDir(folder.path() + "/sub").isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot));
  }

  void historyRoundTrip() {
    const double nan = std::numeric_limits<double>::quiet_NaN();  // also the default of val_loss and accuracy
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<TrainPoint> history(3);
    history[0] = {.step = 1, .loss = 4.25, .lr = 1e-4, .grad_norm = 12.5, .layer_grad_norm = {0.5, 0.25},
                  .layer_entropy = {1.0, 2.0, 3.0}, .tokens_per_second = 1234.5, .seconds = 0.1};
    history[1] = {.step = 2, .loss = 3.0000000000000004, .val_loss = 2.9, .accuracy = 0.125, .lr = 2e-4, .grad_norm = inf,
                  .layer_grad_norm = {nan, 0.75}, .layer_entropy = {0.1, nan, 0.3}, .tokens_per_second = 1300, .seconds = 0.09};
    history[2] = {.step = 3, .loss = 1.0 / 3.0, .accuracy = 0.5, .lr = 3e-4, .grad_norm = 7.0, .layer_grad_norm = {},
                  .layer_entropy = {}, .seconds = 1e-300};
    const std::string file = path("history.csv");
    QCOMPARE(q(writeHistoryCsv(file, history)), QString());

    const std::string text = readBytes(file);
    QVERIFY(text.starts_with(
        "step,loss,val_loss,accuracy,lr,grad_norm,tokens_per_second,seconds,grad_norm_L0,grad_norm_L1,entropy_L0,"
        "entropy_L1,entropy_L2\n1,4.25,,,"));

    std::vector<TrainPoint> loaded = {TrainPoint{}};
    QCOMPARE(q(readHistoryCsv(file, loaded)), QString());
    QCOMPARE(loaded.size(), history.size());
    auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
    auto sameVector = [&](const std::vector<double>& a, const std::vector<double>& b) {
      return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same);
    };
    for (size_t i = 0; i < history.size(); ++i) {
      const TrainPoint& a = loaded[i];
      const TrainPoint& b = history[i];
      QCOMPARE(a.step, b.step);
      for (auto [x, y] : {std::pair{a.loss, b.loss}, {a.val_loss, b.val_loss}, {a.accuracy, b.accuracy}, {a.lr, b.lr},
                          {a.grad_norm, b.grad_norm}, {a.tokens_per_second, b.tokens_per_second}, {a.seconds, b.seconds}})
        QVERIFY2(same(x, y), qPrintable(QString("row %1: %2 vs %3").arg(i).arg(x).arg(y)));
      QVERIFY(sameVector(a.layer_grad_norm, b.layer_grad_norm));
      QVERIFY(sameVector(a.layer_entropy, b.layer_entropy));
    }

    QCOMPARE(q(writeHistoryCsv(file, {})), QString());  // no steps yet: header only, reads back empty
    QCOMPARE(q(readHistoryCsv(file, loaded)), QString());
    QVERIFY(loaded.empty());
  }

  void missingHistoryIsEmpty() {
    std::vector<TrainPoint> loaded(2);
    QCOMPARE(q(readHistoryCsv(path("no-history.csv"), loaded)), QString());
    QVERIFY(loaded.empty());
  }

  void malformedHistoryIsRejected_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    const QString header = "step,loss,val_loss,accuracy,lr,grad_norm,tokens_per_second,seconds,entropy_L0\n";
    QTest::newRow("empty file") << "" << "line 1: missing the header row";
    QTest::newRow("wrong first column") << "steps,loss\n" << "line 1: column 1 should be \"step\"";
    QTest::newRow("short header") << "step,loss,val_loss\n" << "line 1: column 4 should be \"accuracy\"";
    QTest::newRow("layers out of order") << QString(header).replace("entropy_L0", "entropy_L1")
                                          << "line 1: unexpected column \"entropy_L1\"";
    QTest::newRow("too few cells") << header + "1,2,,,0.1,1,100,0.5,1\n2,2,,,0.1\n" << "line 3: expected 9 cells, got 5";
    QTest::newRow("too many cells") << header + "1,2,,,0.1,1,100,0.5,1,7\n" << "line 2: expected 9 cells, got 10";
    QTest::newRow("bad number") << header + "\n1,2,,,0.1,1,100,0.5,1\n2,abc,,,0.1,1,100,0.5,1\n"
                                << "line 4: loss \"abc\" is not a number";
    QTest::newRow("number with junk") << header + "1,2,,,0.1x,1,100,0.5,1\n" << "line 2: lr \"0.1x\" is not a number";
    QTest::newRow("bad layer cell") << header + "1,2,,,0.1,1,100,0.5, 1\n" << "line 2: entropy_L0 \" 1\" is not a number";
    QTest::newRow("fractional step") << header + "1.5,2,,,0.1,1,100,0.5,1\n" << "line 2: step \"1.5\" is not a whole number";
    QTest::newRow("step repeated") << header + "1,2,,,0.1,1,100,0.5,1\n1,2,,,0.1,1,100,0.5,1\n"
                                   << "line 3: step 1 does not follow step 1";
    QTest::newRow("step zero") << header + "0,2,,,0.1,1,100,0.5,1\n" << "line 2: step 0 does not follow step 0";
    QTest::newRow("step beyond int") << header + "99999999999,2,,,0.1,1,100,0.5,1\n"
                                     << "line 2: step \"99999999999\" is not a whole number";
    QString manyLayers = "step,loss,val_loss,accuracy,lr,grad_norm,tokens_per_second,seconds";
    for (int l = 0; l < 65; ++l) manyLayers += QString(",grad_norm_L%1").arg(l);
    QTest::newRow("more layers than a model has") << manyLayers + "\n"
                                                  << "line 1: more per-layer columns than the 64 layers";
  }
  void malformedHistoryIsRejected() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const std::string file = path("bad-history.csv");
    writeBytes(file, text.toStdString());
    std::vector<TrainPoint> loaded(1);
    const QString why = q(readHistoryCsv(file, loaded));
    QVERIFY2(why.startsWith(q(file) + ": ") && why.contains(expected), qPrintable("message was: " + why));
    QCOMPARE(loaded.size(), size_t(1));  // untouched on failure
  }

  void historyToleratesWindowsLineEndings() {
    const std::string file = path("crlf-history.csv");
    writeBytes(file, "step,loss,val_loss,accuracy,lr,grad_norm,tokens_per_second,seconds\r\n5,1.5,,,0.001,2,10,0.5\r\n");
    std::vector<TrainPoint> loaded;
    QCOMPARE(q(readHistoryCsv(file, loaded)), QString());
    QCOMPARE(loaded.size(), size_t(1));
    QCOMPARE(loaded[0].step, 5);
    QCOMPARE(loaded[0].seconds, 0.5);
  }
};

QTEST_APPLESS_MAIN(TestCheckpointFiles)
#include "test_checkpoint_files.moc"
