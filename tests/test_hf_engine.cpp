// engine/hf below the command line: progress and cancelling of a load, the rotary row order,
// F16/BF16 conversion, the cache scan, and an opened model training like the lab's own
// (finite-difference gradients through the loaded GPT-NeoX-style blocks).
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "grad_check.h"
#include "hf/architecture.h"
#include "hf/hf_cache.h"
#include "hf/hf_model.h"
#include "hf/tensor_file.h"
#include "io/checkpoint.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

void writeText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A tiny gpt_neox folder: config.json and model.safetensors holding random tensors of the right shapes.
void writeNeox(const fs::path& dir) {
  const int d = 8, V = 11, L = 1;
  writeText(dir / "config.json",
            R"({"model_type": "gpt_neox", "vocab_size": 11, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
                "intermediate_size": 16, "rotary_pct": 0.5, "max_position_embeddings": 32})");
  ParamStore s;
  auto add = [&](const std::string& n, std::vector<int> shape) { s.add(n, shape); };
  add("gpt_neox.embed_in.weight", {V, d});
  add("embed_out.weight", {V, d});
  for (int l = 0; l < L; ++l) {
    const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
    for (const char* n : {"input_layernorm", "post_attention_layernorm"}) {
      add(p + n + ".weight", {d});
      add(p + n + ".bias", {d});
    }
    add(p + "attention.query_key_value.weight", {3 * d, d});
    add(p + "attention.query_key_value.bias", {3 * d});
    add(p + "attention.dense.weight", {d, d});
    add(p + "attention.dense.bias", {d});
    add(p + "mlp.dense_h_to_4h.weight", {16, d});
    add(p + "mlp.dense_h_to_4h.bias", {16});
    add(p + "mlp.dense_4h_to_h.weight", {d, 16});
    add(p + "mlp.dense_4h_to_h.bias", {d});
  }
  add("gpt_neox.final_layer_norm.weight", {d});
  add("gpt_neox.final_layer_norm.bias", {d});
  Rng rng(3);
  for (auto& p : s.all())
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] = rng.normal(0.f, 0.4f) + (p->name.find("norm.weight") != std::string::npos);
  QCOMPARE(QString::fromStdString(writeSafetensors((dir / "model.safetensors").string(), s)), QString());
}

}  // namespace

class TestHfEngine : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  fs::path root() const { return tmp_.path().toStdString(); }

 private slots:
  void progressRunsToOneAndCancelStops() {
    writeNeox(root() / "neox");
    std::vector<double> seen;
    std::unique_ptr<Model> model;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel((root() / "neox").string(), model, info, [&](double f) {
               seen.push_back(f);
               return true;
             })),
             QString());
    QVERIFY(model && !seen.empty());
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QCOMPARE(seen.back(), 1.0);
    QCOMPARE(info.model_type, std::string("gpt_neox"));
    QCOMPARE(info.parameters, static_cast<uint64_t>(model->params().totalElements()));
    int calls = 0;
    const std::string why = hf::openHfModel((root() / "neox").string(), model, info, [&](double) { return ++calls < 3; });
    QVERIFY2(why.find("cancelled") != std::string::npos, why.c_str());
    QVERIFY(!model);
    QCOMPARE(calls, 3);
  }

  // An opened model is an ordinary Model: its gradients check against finite differences.
  void openedModelTrainsLikeTheLabsOwn() {
    writeNeox(root() / "neox_grad");
    std::unique_ptr<Model> model;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel((root() / "neox_grad").string(), model, info)), QString());
    QVERIFY(model->config().parallel_residual && model->config().mlp == "gelu_erf" && model->config().qkv_bias);
    testing::checkGradients(*model, testing::randomCase(model->config(), 2, 6, 5), "opened gpt_neox");
  }

  void rotaryOrderPairsHalvesAndIsAPermutation() {
    const std::vector<int> order = hf::rotaryOrder(2, 8, 4);  // 2 heads of 8, 4 features rotate
    QCOMPARE(order, (std::vector<int>{0, 2, 1, 3, 4, 5, 6, 7, 8, 10, 9, 11, 12, 13, 14, 15}));
    const std::vector<int> full = hf::rotaryOrder(3, 6, 6);
    QCOMPARE(std::set<int>(full.begin(), full.end()).size(), full.size());
    QCOMPARE(std::vector<int>(full.begin(), full.begin() + 6), (std::vector<int>{0, 3, 1, 4, 2, 5}));
  }

  void halfAndBrainFloatConvert() {
    // F16: 1.0, -2.5, the smallest subnormal, 65504; BF16: 1.0, -3.0
    const uint16_t half[] = {0x3c00, 0xc100, 0x0001, 0x7bff};
    const uint16_t brain[] = {0x3f80, 0xc040};
    const fs::path path = root() / "half.safetensors";
    const std::string header = R"({"h":{"dtype":"F16","shape":[4],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]}})";
    std::string bytes(8, '\0');
    const uint64_t n = header.size();
    std::memcpy(bytes.data(), &n, 8);
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(half), 8);
    bytes.append(reinterpret_cast<const char*>(brain), 4);
    std::ofstream(path, std::ios::binary) << bytes;
    std::vector<hf::TensorEntry> entries;
    QCOMPARE(QString::fromStdString(hf::readTensorHeader(path.string(), entries)), QString());
    QCOMPARE(static_cast<int>(entries.size()), 2);
    float h[4], b[2];
    for (const auto& e : entries) QCOMPARE(QString::fromStdString(hf::readTensorFloats(e, e.name == "h" ? h : b)), QString());
    QCOMPARE(h[0], 1.0f);
    QCOMPARE(h[1], -2.5f);
    QCOMPARE(h[2], std::ldexp(1.0f, -24));
    QCOMPARE(h[3], 65504.0f);
    QCOMPARE(b[0], 1.0f);
    QCOMPARE(b[1], -3.0f);
  }

  void cacheScanNamesEachModelAndWhyOneWouldNotOpen() {
    const fs::path hub = root() / "hub";
    writeNeox(hub / "models--org--tiny-neox" / "snapshots" / "h1");
    writeText(hub / "models--org--tiny-neox" / "refs" / "main", "h1\n");
    writeText(hub / "models--other--bert" / "snapshots" / "h2" / "config.json", R"({"model_type": "bert"})");
    fs::create_directories(hub / "datasets--x--y");  // not a model
    const auto models = hf::scanHfCache(hub.string());
    QCOMPARE(static_cast<int>(models.size()), 2);
    QCOMPARE(models[0].name, std::string("org/tiny-neox"));
    QCOMPARE(models[0].model_type, std::string("gpt_neox"));
    QCOMPARE(models[0].path, (hub / "models--org--tiny-neox" / "snapshots" / "h1").string());
    QVERIFY(models[0].bytes > 0 && models[0].parameters > 0 && models[0].problem.empty());
    QCOMPARE(models[1].name, std::string("other/bert"));
    QVERIFY2(models[1].problem.find("bert") != std::string::npos, models[1].problem.c_str());
    QVERIFY(hf::scanHfCache((root() / "absent").string()).empty());
  }
};

QTEST_APPLESS_MAIN(TestHfEngine)
#include "test_hf_engine.moc"
