// The one field table of the experiment (io/config_json.h): every single value of every preset
// reads back through --set unchanged, a changed value shows in the JSON under its key, and names that
// are not a single value are refused. The app's experiment panel shows and reads its editors through
// the same two functions.
#include <QtTest>

#include "io/config_json.h"

using namespace attnlab;

class TestConfigFields : public QObject {
  Q_OBJECT

 private slots:
  void everyValueReadsBackThroughSet() {
    const std::vector<std::string> keys = configFieldKeys();
    QVERIFY(keys.size() > 40);
    QVERIFY(std::find(keys.begin(), keys.end(), "model.d_model") != keys.end());
    QVERIFY(std::find(keys.begin(), keys.end(), "train.seed") != keys.end());
    QVERIFY(std::find(keys.begin(), keys.end(), "model.attention_settings") == keys.end());  // a map, set per entry
    int checked = 0;
    for (const std::string& preset : presetNames()) {
      ExperimentConfig config;
      QCOMPARE(loadPreset(preset, config), std::string());
      for (const std::string& key : keys) {
        std::string text;
        QVERIFY2(configFieldText(config, key, text).empty(), key.c_str());
        ExperimentConfig copy = config;
        const std::string why = applyOverride(copy, key + "=" + text);
        // An empty string (no description, no text file) is a value --set takes as it is.
        QVERIFY2(why.empty(), (preset + ": " + key + "=" + text + ": " + why).c_str());
        QVERIFY2(configToJson(copy) == configToJson(config), (preset + ": " + key + "=" + text + " changed the config").c_str());
        ++checked;
      }
    }
    QVERIFY(checked > 400);
  }

  void aChangedValueShowsUnderItsKey() {
    ExperimentConfig config;
    QCOMPARE(loadPreset("default", config), std::string());
    std::string text;
    for (const auto& [key, value, json] : {std::tuple{"model.d_model", "96", "\"d_model\": 96"}, {"train.lr", "0.0125", "\"lr\": 0.0125"},
                                           {"model.attention", "softmax,sigmoid", "\"sigmoid\""}, {"train.seed", "18446744073709551615", "18446744073709551615"},
                                           {"model.value_gate", "true", "\"value_gate\": true"}}) {
      QCOMPARE(applyOverride(config, std::string(key) + "=" + value), std::string());
      QCOMPARE(configFieldText(config, key, text), std::string());
      QCOMPARE(text, std::string(value));
      QVERIFY2(configToJson(config).find(json) != std::string::npos, key);
    }
  }

  void otherNamesAreRefused() {
    const ExperimentConfig config;
    std::string text = "unchanged";
    for (const char* key : {"model.nope", "model", "nope", "model.attention_settings", "model.d_model.x", ""})
      QVERIFY2(!configFieldText(config, key, text).empty(), key);
    QCOMPARE(text, std::string("unchanged"));
  }
};

QTEST_MAIN(TestConfigFields)
#include "test_config_fields.moc"
