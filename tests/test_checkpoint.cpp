// Whole checkpoints: save a trained model, load it back bit-exact, replace folders safely, and
// report damaged checkpoints by file name.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/checkpoint.h"
#include "io/config_json.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

// Small enough to train a few steps in well under a second; untied, with an MLP and learned
// positions so that every kind of tensor is in the file.
ExperimentConfig tinyConfig() {
  ExperimentConfig c;
  for (const char* set : {"task.name=copy", "model.d_model=16", "model.n_layers=2", "model.n_heads=2", "model.d_ff=24",
                          "model.context=32", "model.tied_embeddings=false", "model.positional=learned",
                          "train.batch=4", "train.steps=10", "train.threads=1", "train.seed=5"})
    if (!applyOverride(c, set).empty()) qFatal("bad override %s", set);
  return c;
}

std::string readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Names in a folder, for checking that no temporary or old copies are left behind.
QStringList entries(const fs::path& folder) {
  QStringList names;
  for (const auto& e : fs::directory_iterator(folder)) names << QString::fromStdString(e.path().filename().string());
  names.sort();
  return names;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root() const { return fs::path(dir_.path().toStdString()); }

  std::unique_ptr<Trainer> trained(int steps) {
    auto trainer = std::make_unique<Trainer>(tinyConfig());
    for (int i = 0; i < steps; ++i) trainer->trainStep();
    return trainer;
  }

 private slots:
  void roundTripRestoresEverything() {
    const auto trainer = trained(3);
    const fs::path folder = root() / "runs" / "first";  // the parent does not exist yet
    QCOMPARE(q(saveCheckpoint(folder.string() + "/", *trainer)), QString());
    QCOMPARE(entries(folder), (QStringList{"config.json", "history.csv", "model.safetensors", "optimizer.safetensors",
                                          "qk_history.json", "qk_history.safetensors", "training_state.json"}));
    QCOMPARE(entries(root() / "runs"), QStringList{"first"});

    LoadedCheckpoint loaded;
    QCOMPARE(q(loadCheckpoint(folder.string(), loaded)), QString());
    QVERIFY(loaded.trainer);
    QCOMPARE(configToJson(loaded.config), configToJson(trainer->config()));
    QVERIFY(loaded.config.model.vocab > 0);  // saved filled in
    QCOMPARE(loaded.trainer->stepsDone(), 3);
    QCOMPARE(loaded.trainer->history().size(), size_t(3));
    QCOMPARE(loaded.trainer->history().back().loss, trainer->history().back().loss);
    QCOMPARE(loaded.trainer->history().back().layer_entropy, trainer->history().back().layer_entropy);

    const ParamStore& a = trainer->model().params();
    const ParamStore& b = loaded.trainer->model().params();
    QCOMPARE(a.all().size(), b.all().size());
    for (const auto& p : a.all()) {
      const Param* other = b.find(p->name);
      QVERIFY2(other, p->name.c_str());
      QVERIFY2(other->value.size() == p->value.size() &&
                   std::memcmp(other->value.data(), p->value.data(), p->value.size() * sizeof(float)) == 0,
               p->name.c_str());
    }
    loaded.trainer->trainStep();  // a restored experiment trains on
    QCOMPARE(loaded.trainer->stepsDone(), 4);
  }

  void tensorNamesFollowTheDocumentedConvention() {
    const auto trainer = trained(0);
    const fs::path folder = root() / "names";
    QCOMPARE(q(saveCheckpoint(folder.string(), *trainer)), QString());
    const std::string file = readBytes(folder / "model.safetensors");
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(file[i])) << (8 * i);
    const auto header = nlohmann::json::parse(file.substr(8, n));
    const int V = trainer->model().config().vocab;
    const std::vector<std::pair<std::string, std::vector<int>>> expected = {
        {"tok_emb.weight", {V, 16}},          {"pos_emb.weight", {32, 16}},        {"blocks.1.ln1.weight", {16}},
        {"blocks.1.ln1.bias", {16}},          {"blocks.1.attn.wq.weight", {16, 16}}, {"blocks.1.attn.wk.weight", {16, 16}},
        {"blocks.1.attn.wv.weight", {16, 16}}, {"blocks.1.attn.wo.weight", {16, 16}}, {"blocks.1.ln2.weight", {16}},
        {"blocks.1.mlp.fc.weight", {24, 16}},  {"blocks.1.mlp.fc.bias", {24}},       {"blocks.1.mlp.proj.weight", {16, 24}},
        {"blocks.1.mlp.proj.bias", {16}},      {"ln_f.weight", {16}},               {"ln_f.bias", {16}},
        {"head.weight", {V, 16}}};
    for (const auto& [name, shape] : expected) {
      QVERIFY2(header.contains(name), name.c_str());
      QVERIFY2(header[name]["shape"].get<std::vector<int>>() == shape, name.c_str());
    }
  }

  void savingReplacesTheWholeFolder() {
    const fs::path folder = root() / "replace";
    QCOMPARE(q(saveCheckpoint(folder.string(), *trained(1))), QString());
    QCOMPARE(q(saveCheckpoint(folder.string(), *trained(2))), QString());
    QCOMPARE(entries(root() / "replace"), (QStringList{"config.json", "history.csv", "model.safetensors", "optimizer.safetensors",
                                                    "qk_history.json", "qk_history.safetensors", "training_state.json"}));
    for (const auto& e : fs::directory_iterator(root()))  // no .tmp- or .old- siblings left
      QVERIFY2(e.path().filename().string().find('.') == std::string::npos, e.path().c_str());
    LoadedCheckpoint loaded;
    QCOMPARE(q(loadCheckpoint(folder.string(), loaded)), QString());
    QCOMPARE(loaded.trainer->stepsDone(), 2);
  }

  void savingNeverReplacesForeignFiles() {
    const fs::path folder = root() / "my documents";
    fs::create_directories(folder);
    writeBytes(folder / "thesis.txt", "precious");
    const auto trainer = trained(0);
    QVERIFY(q(saveCheckpoint(folder.string(), *trainer)).contains("not an attnlab checkpoint"));
    QCOMPARE(readBytes(folder / "thesis.txt"), std::string("precious"));

    const fs::path file = root() / "a file";
    writeBytes(file, "also precious");
    QVERIFY(q(saveCheckpoint(file.string(), *trainer)).contains("is not a folder"));
    QCOMPARE(readBytes(file), std::string("also precious"));
  }

  void damagedCheckpointsNameTheFile() {
    const fs::path folder = root() / "damaged";
    const auto trainer = trained(2);
    auto freshCopy = [&] {
      fs::remove_all(folder);
      QCOMPARE(q(saveCheckpoint(folder.string(), *trainer)), QString());
    };
    auto expectLoadError = [&](const QString& expected) {
      LoadedCheckpoint loaded;
      const QString why = q(loadCheckpoint(folder.string(), loaded));
      QVERIFY2(why.contains(expected), qPrintable("message was: " + why));
      QVERIFY(!loaded.trainer);
    };

    LoadedCheckpoint loaded;
    QVERIFY(q(loadCheckpoint((root() / "absent").string(), loaded)).contains("no such checkpoint folder"));

    freshCopy();
    fs::remove(folder / "config.json");
    expectLoadError(q((folder / "config.json").string()) + ": missing");

    freshCopy();
    std::string config = readBytes(folder / "config.json");
    config.replace(config.find("\"d_model\": 16"), 13, "\"d_model\": \"abc\"");
    writeBytes(folder / "config.json", config);
    expectLoadError(q((folder / "config.json").string()) + ": model.d_model must be an integer, got \"abc\"");

    freshCopy();
    config = readBytes(folder / "config.json");
    config.replace(config.find("\"d_model\": 16"), 13, "\"d_model\": 32");
    writeBytes(folder / "config.json", config);
    expectLoadError(q((folder / "model.safetensors").string()) + ": tensor ");

    freshCopy();
    config = readBytes(folder / "config.json");
    config.replace(config.find("\"n_heads\": 2"), 12, "\"n_heads\": 3");
    writeBytes(folder / "config.json", config);
    expectLoadError(q((folder / "config.json").string()) + ": model.n_heads (3) must divide");

    freshCopy();
    fs::remove(folder / "model.safetensors");
    expectLoadError(q((folder / "model.safetensors").string()) + ": ");

    freshCopy();
    writeBytes(folder / "history.csv", readBytes(folder / "history.csv") + "3,oops\n");
    expectLoadError(q((folder / "history.csv").string()) + ": line 4: expected");

    freshCopy();
    fs::remove(folder / "history.csv");  // the training state says 2 steps were taken
    expectLoadError(q((folder / "training_state.json").string()) + ": \"step\" is 2 but history.csv ends at step 0");
    fs::remove(folder / "training_state.json");
    fs::remove(folder / "optimizer.safetensors");
    expectLoadError(q((folder / "qk_history.json").string()) + ": each step must be a whole number up to the run's 0 steps");
    fs::remove(folder / "qk_history.json");  // no history, no state, no spectra past: a valid (untrained) checkpoint
    fs::remove(folder / "qk_history.safetensors");
    QCOMPARE(q(loadCheckpoint(folder.string(), loaded)), QString());
    QCOMPARE(loaded.trainer->stepsDone(), 0);
  }
};

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
