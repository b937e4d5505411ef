// ExperimentConfig <-> JSON, the embedded presets, and key=value overrides.
#include <QtTest>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "io/config_json.h"

using namespace attnlab;

namespace QTest {
template <>
inline char* toString(const std::string& s) {
  return qstrdup(s.c_str());
}
}  // namespace QTest

namespace {

// Every field differs from its default, so a field the JSON code forgets shows up as a mismatch.
ExperimentConfig unusualConfig() {
  ExperimentConfig c;
  c.name = "Unusual \"quoted\" name";
  c.description = "Line one\nline two, with unicode: \xc3\xa9\xe2\x86\x92";
  c.model.vocab = 37;
  c.model.d_model = 96;
  c.model.n_layers = 3;
  c.model.n_heads = 6;
  c.model.n_kv_heads = 2;
  c.model.d_ff = 200;
  c.model.context = 77;
  c.model.attention_only = true;
  c.model.tied_embeddings = false;
  c.model.attention = {"softmax", "sigmoid", "linear"};
  c.model.attention_settings = {{"temperature", 0.7}, {"window", 16}};
  c.model.positional = "rope";
  c.model.positional_settings = {{"theta", 500.25}, {"rotary_fraction", 0.5}};
  c.model.projection_sharing = "q-k=v";
  c.model.score_precision = "bf16";
  c.model.output_gate = "headwise";
  c.model.value_gate = true;
  c.model.retention_gate = true;
  c.model.retention_sparsity = 0.375;
  c.task.name = "associative_recall";
  c.task.settings = {{"pairs", 8}, {"length_multiplier", 1.5}};
  c.task.text_path = "/tmp/some text.txt";
  c.task.seq_len = 48;
  c.train.steps = 1234;
  c.train.batch = 7;
  c.train.lr = 1.2345678901234567e-3;
  c.train.min_lr_ratio = 0.05;
  c.train.warmup = 11;
  c.train.weight_decay = 0.125;
  c.train.beta1 = 0.85;
  c.train.beta2 = 0.995;
  c.train.eps = 1e-7;
  c.train.grad_clip = 0;
  c.train.seed = 18446744073709551615ull;
  c.train.threads = 1;
  c.train.eval_every = 25;
  c.train.eval_batches = 9;
  return c;
}

void compareConfigs(const ExperimentConfig& a, const ExperimentConfig& b) {
  QCOMPARE(a.name, b.name);
  QCOMPARE(a.description, b.description);
  QCOMPARE(a.model.vocab, b.model.vocab);
  QCOMPARE(a.model.d_model, b.model.d_model);
  QCOMPARE(a.model.n_layers, b.model.n_layers);
  QCOMPARE(a.model.n_heads, b.model.n_heads);
  QCOMPARE(a.model.n_kv_heads, b.model.n_kv_heads);
  QCOMPARE(a.model.d_ff, b.model.d_ff);
  QCOMPARE(a.model.context, b.model.context);
  QCOMPARE(a.model.attention_only, b.model.attention_only);
  QCOMPARE(a.model.tied_embeddings, b.model.tied_embeddings);
  QVERIFY(a.model.attention == b.model.attention);
  QVERIFY(a.model.attention_settings == b.model.attention_settings);
  QCOMPARE(a.model.positional, b.model.positional);
  QVERIFY(a.model.positional_settings == b.model.positional_settings);
  QCOMPARE(a.model.projection_sharing, b.model.projection_sharing);
  QCOMPARE(a.model.score_precision, b.model.score_precision);
  QCOMPARE(a.model.output_gate, b.model.output_gate);
  QCOMPARE(a.model.value_gate, b.model.value_gate);
  QCOMPARE(a.model.retention_gate, b.model.retention_gate);
  QCOMPARE(a.model.retention_sparsity, b.model.retention_sparsity);
  QCOMPARE(a.task.name, b.task.name);
  QVERIFY(a.task.settings == b.task.settings);
  QCOMPARE(a.task.text_path, b.task.text_path);
  QCOMPARE(a.task.seq_len, b.task.seq_len);
  QCOMPARE(a.train.steps, b.train.steps);
  QCOMPARE(a.train.batch, b.train.batch);
  QCOMPARE(a.train.lr, b.train.lr);  // exact: doubles are written with round-trip precision
  QCOMPARE(a.train.min_lr_ratio, b.train.min_lr_ratio);
  QCOMPARE(a.train.warmup, b.train.warmup);
  QCOMPARE(a.train.weight_decay, b.train.weight_decay);
  QCOMPARE(a.train.beta1, b.train.beta1);
  QCOMPARE(a.train.beta2, b.train.beta2);
  QCOMPARE(a.train.eps, b.train.eps);
  QCOMPARE(a.train.grad_clip, b.train.grad_clip);
  QCOMPARE(a.train.seed, b.train.seed);
  QCOMPARE(a.train.threads, b.train.threads);
  QCOMPARE(a.train.eval_every, b.train.eval_every);
  QCOMPARE(a.train.eval_batches, b.train.eval_batches);
}

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

class TestConfig : public QObject {
  Q_OBJECT

 private slots:
  void roundTripKeepsEveryField() {
    const ExperimentConfig original = unusualConfig();
    const std::string text = configToJson(original);
    ExperimentConfig loaded;
    QCOMPARE(q(configFromJson(text, loaded)), QString());
    compareConfigs(loaded, original);
    QCOMPARE(configToJson(loaded), text);  // stable: writing again gives the same bytes
  }

  void writtenLayoutIsAsDocumented() {
    const auto json = nlohmann::json::parse(configToJson(unusualConfig()));
    QCOMPARE(json["format"].get<std::string>(), std::string("attnlab-experiment-1"));
    QVERIFY(json["model"]["attention"].is_array());
    QCOMPARE(json["model"]["attention"].size(), size_t(3));
    QCOMPARE(json["model"]["attention_settings"]["window"].get<double>(), 16.0);
    QCOMPARE(json["model"]["d_model"].get<int>(), 96);
    QCOMPARE(json["task"]["settings"]["pairs"].get<double>(), 8.0);
    QCOMPARE(json["train"]["seed"].get<uint64_t>(), 18446744073709551615ull);
    for (const char* section : {"model", "task", "train"}) QVERIFY(json[section].is_object());
  }

  void missingKeysKeepDefaults() {
    ExperimentConfig loaded = unusualConfig();
    QCOMPARE(q(configFromJson("{}", loaded)), QString());
    compareConfigs(loaded, ExperimentConfig{});

    QCOMPARE(q(configFromJson(R"({"model": {"d_model": 32, "attention": "sigmoid"}, "train": {"steps": 2e3}})", loaded)),
             QString());
    QCOMPARE(loaded.model.d_model, 32);
    QCOMPARE(loaded.model.attention, std::vector<std::string>{"sigmoid"});  // a single string is accepted
    QCOMPARE(loaded.train.steps, 2000);
    QCOMPARE(loaded.model.n_layers, ModelConfig{}.n_layers);
  }

  void badJsonIsRejected_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");  // the message must contain this
    QTest::newRow("not json") << "{\"model\": " << "not valid JSON";
    QTest::newRow("array at top") << "[1, 2]" << "top level must be a JSON object";
    QTest::newRow("empty text") << "" << "not valid JSON";
    QTest::newRow("unknown top key") << R"({"modle": {}})" << "unknown key modle (top-level keys: format, name";
    QTest::newRow("unknown model key")
        << R"({"model": {"d_modle": 3}})" << "unknown key model.d_modle (model keys: vocab, d_model, n_layers";
    QTest::newRow("unknown train key") << R"({"train": {"stepz": 3}})" << "unknown key train.stepz (train keys: steps";
    QTest::newRow("unknown task key") << R"({"task": {"path": "x"}})" << "unknown key task.path (task keys: name";
    QTest::newRow("string for int")
        << R"({"model": {"d_model": "abc"}})" << R"(model.d_model must be an integer, got "abc")";
    QTest::newRow("fraction for int") << R"({"model": {"d_model": 64.5}})" << "model.d_model must be an integer, got 64.5";
    QTest::newRow("int out of range") << R"({"model": {"n_layers": 99999999999}})" << "model.n_layers = 99999999999 is out of range";
    QTest::newRow("negative seed") << R"({"train": {"seed": -1}})" << "train.seed must be a non-negative integer, got -1";
    QTest::newRow("string for double") << R"({"train": {"lr": "fast"}})" << R"(train.lr must be a number, got "fast")";
    QTest::newRow("number for bool") << R"({"model": {"attention_only": 1}})" << "model.attention_only must be true or false, got 1";
    QTest::newRow("number for string") << R"({"task": {"name": 5}})" << "task.name must be a string, got 5";
    QTest::newRow("number for list") << R"({"model": {"attention": 5}})" << "model.attention must be a string or a list of strings";
    QTest::newRow("bad list item") << R"({"model": {"attention": ["softmax", 2]}})" << "model.attention[1] must be a string, got 2";
    QTest::newRow("settings not object")
        << R"({"model": {"attention_settings": [1]}})" << "model.attention_settings must be an object of numbers";
    QTest::newRow("setting not number")
        << R"({"task": {"settings": {"pairs": "8"}}})" << R"(task.settings.pairs must be a number, got "8")";
    QTest::newRow("section not object") << R"({"train": 5})" << "train must be an object, got 5";
    QTest::newRow("name not string") << R"({"name": ["a"]})" << R"(name must be a string, got ["a"])";
    QTest::newRow("other format")
        << R"({"format": "attnlab-experiment-2", "modle": 1})"
        << R"(format "attnlab-experiment-2" is not supported (this version reads "attnlab-experiment-1"))";
    QTest::newRow("format not string") << R"({"format": 1})" << "format must be a string, got 1";
  }
  void badJsonIsRejected() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    ExperimentConfig config = unusualConfig();
    const QString why = q(configFromJson(json.toStdString(), config));
    QVERIFY2(why.contains(expected), qPrintable("message was: " + why));
    QVERIFY2(!why.contains('\n'), "messages are one line");
    compareConfigs(config, unusualConfig());  // a failed read leaves the target untouched
  }

  void formatIsOptional() {
    ExperimentConfig config;
    QCOMPARE(q(configFromJson(R"({"format": "attnlab-experiment-1", "name": "x"})", config)), QString());
    QCOMPARE(config.name, std::string("x"));
    QCOMPARE(q(configFromJson(R"({"name": "y"})", config)), QString());
    QCOMPARE(config.name, std::string("y"));
  }

  void everyPresetLoads() {
    const std::vector<std::string> names = presetNames();
    QVERIFY(names.size() >= 10);
    QCOMPARE(names.front(), std::string("default"));
    QVERIFY(std::is_sorted(names.begin() + 1, names.end()));
    for (const char* expected : {"default", "induction", "associative_recall", "passkey", "toy_language", "copy",
                                 "reverse", "sorting", "modular_addition", "dyck"})
      QVERIFY2(std::find(names.begin(), names.end(), expected) != names.end(), expected);

    const std::vector<std::string> tasks = {"copy", "reverse", "induction", "associative_recall", "passkey",
                                            "modular_addition", "dyck", "sorting", "toy_language", "text"};
    for (const std::string& name : names) {
      ExperimentConfig config;
      QVERIFY2(loadPreset(name, config).empty(), name.c_str());
      QVERIFY2(!config.name.empty() && !config.description.empty(), name.c_str());
      QVERIFY2(std::find(tasks.begin(), tasks.end(), config.task.name) != tasks.end(), name.c_str());
      // The preset's own text round-trips through the writer unchanged in meaning.
      ExperimentConfig again;
      QVERIFY(configFromJson(configToJson(config), again).empty());
      compareConfigs(again, config);
    }
  }

  void presetsHaveTheDocumentedShapes() {
    ExperimentConfig c;
    QVERIFY(loadPreset("default", c).empty());
    QCOMPARE(c.task.name, std::string("toy_language"));
    QCOMPARE(c.model.d_model, 128);
    QCOMPARE(c.model.n_layers, 4);
    QCOMPARE(c.model.positional, std::string("learned"));
    QCOMPARE(c.train.steps, 2000);

    QVERIFY(loadPreset("induction", c).empty());
    QCOMPARE(c.name, std::string("Induction heads"));
    QCOMPARE(c.task.name, std::string("induction"));
    QCOMPARE(c.model.n_layers, 2);
    QVERIFY(c.model.attention_only);
    QCOMPARE(c.model.positional, std::string("rope"));
    QCOMPARE(c.task.settings.at("length"), 16.0);
    QCOMPARE(c.task.settings.at("symbols"), 32.0);

    QVERIFY(loadPreset("toy_language", c).empty());
    QCOMPARE(c.name, std::string("Toy language"));
    QCOMPARE(c.train.steps, 3000);
  }

  void unknownPresetListsTheKnownOnes() {
    ExperimentConfig c;
    const QString why = q(loadPreset("inductoin", c));
    QVERIFY2(why.contains("unknown preset \"inductoin\"") && why.contains("default, ") && why.contains("induction"),
             qPrintable(why));
  }

  void goodOverrides() {
    ExperimentConfig c;
    QCOMPARE(q(applyOverride(c, "model.d_model=64")), QString());
    QCOMPARE(c.model.d_model, 64);
    QCOMPARE(q(applyOverride(c, "train.lr=1e-3")), QString());
    QCOMPARE(c.train.lr, 1e-3);
    QCOMPARE(q(applyOverride(c, "model.attention=softmax, sigmoid")), QString());
    QCOMPARE(c.model.attention, (std::vector<std::string>{"softmax", "sigmoid"}));
    QCOMPARE(q(applyOverride(c, "model.positional_settings.theta=500")), QString());
    QCOMPARE(c.model.positional_settings.at("theta"), 500.0);
    QCOMPARE(q(applyOverride(c, "model.attention_settings.window=16")), QString());
    QCOMPARE(c.model.attention_settings.at("window"), 16.0);
    QCOMPARE(q(applyOverride(c, "task.settings.pairs=8")), QString());
    QCOMPARE(c.task.settings.at("pairs"), 8.0);
    QCOMPARE(q(applyOverride(c, "task.name=induction")), QString());
    QCOMPARE(c.task.name, std::string("induction"));
    QCOMPARE(q(applyOverride(c, "train.seed=18446744073709551615")), QString());
    QCOMPARE(c.train.seed, 18446744073709551615ull);
    QCOMPARE(q(applyOverride(c, "name=My run")), QString());
    QCOMPARE(c.name, std::string("My run"));
    QCOMPARE(q(applyOverride(c, "task.text_path=/a/b=c.txt")), QString());  // only the first '=' splits
    QCOMPARE(c.task.text_path, std::string("/a/b=c.txt"));
    for (const auto& [text, value] : {std::pair{"true", true}, {"0", false}, {"1", true}, {"false", false}}) {
      QCOMPARE(q(applyOverride(c, std::string("model.attention_only=") + text)), QString());
      QCOMPARE(c.model.attention_only, value);
    }
  }

  void badOverrides_data() {
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<QString>("expected");
    QTest::newRow("trailing junk") << "model.d_model=12abc" << R"(model.d_model must be an integer, got "12abc")";
    QTest::newRow("empty number") << "model.d_model=" << R"(model.d_model must be an integer, got "")";
    QTest::newRow("int overflow") << "model.d_model=99999999999" << "model.d_model must be an integer";
    QTest::newRow("fraction for int") << "train.steps=1.5" << "train.steps must be an integer";
    QTest::newRow("bad double") << "train.lr=abc" << R"(train.lr must be a finite number, got "abc")";
    QTest::newRow("double junk") << "train.lr=1e-3x" << "train.lr must be a finite number";
    QTest::newRow("nan") << "train.lr=nan" << "train.lr must be a finite number";
    QTest::newRow("negative seed") << "train.seed=-1" << "train.seed must be a non-negative integer";
    QTest::newRow("bad bool") << "model.attention_only=yes" << "model.attention_only must be true, false, 1 or 0";
    QTest::newRow("unknown key") << "model.d_modle=3" << "unknown key model.d_modle (model keys: vocab, d_model,";
    QTest::newRow("unknown train key") << "train.stepz=3" << "unknown key train.stepz (train keys: steps, batch, lr";
    QTest::newRow("unknown section") << "modle.d_model=3" << "unknown section modle (sections: model, task, train";
    QTest::newRow("unknown top key") << "nmae=x" << "unknown key nmae (top-level keys: name, description";
    QTest::newRow("no equals") << "model.d_model" << "expected section.key=value";
    QTest::newRow("empty list item") << "model.attention=softmax,,sigmoid" << "model.attention must be a comma-separated list";
    QTest::newRow("settings without key") << "model.attention_settings=3" << "model.attention_settings needs a setting name";
    QTest::newRow("bad setting") << "task.settings.pairs=eight" << R"(task.settings.pairs must be a finite number, got "eight")";
    QTest::newRow("sub-key of scalar") << "model.d_model.x=1" << R"(model.d_model has no sub-key "x")";
    QTest::newRow("empty part") << "model..d_model=1" << "malformed key";
  }
  void badOverrides() {
    QFETCH(QString, assignment);
    QFETCH(QString, expected);
    ExperimentConfig config = unusualConfig();
    const QString why = q(applyOverride(config, assignment.toStdString()));
    QVERIFY2(why.contains(expected), qPrintable("message was: " + why));
    compareConfigs(config, unusualConfig());  // a rejected override changes nothing
  }
};

QTEST_APPLESS_MAIN(TestConfig)
#include "test_config.moc"
