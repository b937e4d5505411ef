// Every setting a formula takes, at a value other than its default. Two kinds of check:
// - Over the registries: for each attention variant, positional encoding, eviction policy and
//   generated task, each setting moved off its default must change what the member computes (the
//   model's logits, the kept sets over a 28-step decode, the sampled data). A setting read but
//   then replaced by its default (a real bug seen before) fails here, naming the member and key.
// - Against the formula, at non-default values: the softmax family's temperature and window, the
//   sigmoid's temperature and bias, and RoPE's theta, NTK and linear scaling as angles. (Llama 3
//   scaling, span_rotary_only, momentum_gamma, the sink logit, l1_rank and presence_tau are checked
//   against their formulas in test_formula_values.)
// (The eviction policies' windows, sinks and ratios are checked against their rules at
// non-default values step by step in test_kv_policy_reference.)
#include <QtTest>

#include "model_support.h"

#include <cmath>
#include <map>

#include "attention/attention.h"
#include "data/task.h"
#include "kv/decoder.h"
#include "kv/eviction_policy.h"
#include "positional/positional.h"

using namespace attnlab;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1};

// A value in range and away from the default; `overrides` names the ones a test shape needs.
double nonDefault(const SettingSpec& s, const std::map<std::string, double>& overrides) {
  if (auto it = overrides.find(s.key); it != overrides.end()) return it->second;
  if (s.integer) return s.defaultValue > s.min ? std::max(s.min, std::floor(s.defaultValue / 2)) : std::min(s.max, s.defaultValue + 1);
  if (s.defaultValue == 0) return std::min(s.max, 1.0);
  return s.defaultValue * 2 <= s.max ? s.defaultValue * 2 : (s.min + s.defaultValue) / 2;
}

double maxDifference(const Mat& a, const Mat& b) { return (a - b).cwiseAbs().maxCoeff(); }

// Settings that act only together with another: the others they need, set in both runs.
Settings enablersOf(const std::string& key) {
  if (key == "span_rotary_only") return {{"rotary_fraction", 0.5}};
  if (key.rfind("llama3_", 0) == 0 && key != "llama3_factor") return {{"llama3_factor", 8}, {"llama3_original_context", 1000}};
  if (key == "llama3_factor") return {{"llama3_original_context", 1000}};
  return {};
}

// d_head 16 (8 rotary pairs, wavelengths 6 to 20,000 positions), so Llama 3's three bands all occur.
ModelConfig wideHeads(const std::string& attention, const std::string& positional) {
  ModelConfig c = testing::smallConfig(attention, positional);
  c.d_model = 32;
  c.n_heads = 2;
  return c;
}

Mat logitsOf(const ModelConfig& c) { return testing::traceOf(*testing::randomisedModel(c), kTokens).logits; }

// All kept positions after every step of a 28-token decode, layer by layer and head by head.
std::vector<int> keptOverDecode(const Model& model, const std::string& policy, const Settings& settings, const std::string& budgetText) {
  Budget budget;
  if (!budgetText.empty()) parseBudget(budgetText, "head", budget);
  Decoder decoder(model, makeEvictionPolicy(policy, settings, model.config()), policy, budget);
  std::vector<int> kept;
  for (int t = 0; t < 28; ++t) {
    decoder.step((t * 7 + 3) % model.config().vocab);
    for (const HeadOccupancy& h : decoder.record().heads) {
      kept.insert(kept.end(), h.live.begin(), h.live.end());
      kept.push_back(-1);
    }
  }
  return kept;
}

Mat softmaxRows(const Mat& logits, int window) {
  Mat a = Mat::Zero(logits.rows(), logits.cols());
  for (int i = 0; i < logits.rows(); ++i) {
    const int first = window > 0 ? std::max(0, i - window + 1) : 0;
    double sum = 0;
    for (int j = first; j <= i; ++j) sum += std::exp(static_cast<double>(logits(i, j)));
    for (int j = first; j <= i; ++j) a(i, j) = static_cast<float>(std::exp(static_cast<double>(logits(i, j))) / sum);
  }
  return a;
}

}  // namespace

class TestFormulaSettings : public QObject {
  Q_OBJECT

 private slots:
  void everyAttentionSettingChangesTheModel() {
    for (const auto& entry : AttentionRegistry::instance().entries())
      for (const SettingSpec& s : entry.make()->settingSpecs()) {
        ModelConfig base = wideHeads(entry.name, "none");
        ModelConfig moved = base;
        moved.attention_settings[s.key] = nonDefault(s, {{"window", 4}});
        const double d = maxDifference(logitsOf(base), logitsOf(moved));
        if (!(d > 1e-5))
          QFAIL(qPrintable(QString("%1: %2 = %3 changes no logit (largest change %4)")
                               .arg(entry.name.c_str(), s.key.c_str()).arg(moved.attention_settings[s.key]).arg(d)));
      }
  }

  void everyPositionalSettingChangesTheModel() {
    for (const auto& entry : PositionalRegistry::instance().entries())
      for (const SettingSpec& s : entry.make()->settingSpecs()) {
        ModelConfig base = wideHeads("softmax", entry.name);
        base.positional_settings = enablersOf(s.key);
        ModelConfig moved = base;
        moved.positional_settings[s.key] = nonDefault(s, {{"llama3_original_context", 2000}, {"llama3_factor", 8}});
        const double d = maxDifference(logitsOf(base), logitsOf(moved));
        if (!(d > 1e-5))
          QFAIL(qPrintable(QString("%1: %2 = %3 changes no logit (largest change %4)")
                               .arg(entry.name.c_str(), s.key.c_str()).arg(moved.positional_settings[s.key]).arg(d)));
      }
  }

  void everyPolicySettingChangesWhatIsKept() {
    ModelConfig c = testing::smallConfig("softmax", "rope", 9, 32);
    c.retention_gate = true;  // the learned gate's policy reads it
    const auto model = testing::randomisedModel(c, 0.6f);
    for (const auto& entry : EvictionPolicyRegistry::instance().entries()) {
      const auto specs = entry.make()->settingSpecs();
      for (const SettingSpec& s : specs) {
        // without a budget the learned gate's threshold and DuoAttention's streaming window decide; a budget decides for the rest
        const bool unbudgeted = (entry.name == "learned_gate" && s.key == "threshold") || entry.name == "duo_attention";
        const std::string budget = unbudgeted ? "" : "6";
        // DuoAttention's sinks and recent window act on streaming heads: a threshold of 1 makes every head one
        Settings base;
        if (entry.name == "duo_attention" && s.key != "threshold") base["threshold"] = 1;
        Settings moved = base;
        moved[s.key] = nonDefault(s, {{"threshold", entry.name == "duo_attention" ? 0.6 : 0.8}, {"beta", 3}, {"safeguard", 1}});
        if (keptOverDecode(*model, entry.name, base, budget) == keptOverDecode(*model, entry.name, moved, budget))
          QFAIL(qPrintable(QString("%1: %2 = %3 keeps exactly what the default keeps over 28 steps")
                               .arg(entry.name.c_str(), s.key.c_str()).arg(moved.at(s.key))));
      }
    }
  }

  void everyTaskSettingChangesTheData() {
    for (const auto& entry : TaskRegistry::instance().entries()) {
      if (entry.name == "text" || entry.name == "token_files") continue;  // read a user's file; test_tasks covers them
      for (const SettingSpec& s : entry.make()->settingSpecs()) {
        TaskConfig base;
        base.name = entry.name;
        TaskConfig moved = base;
        moved.settings[s.key] = nonDefault(s, {{"train_fraction", 0.5}, {"length_multiplier", 2}});
        auto sample = [](const TaskConfig& config) {
          std::string error;
          auto task = makeTask(config, error);
          if (!task) return std::vector<int>{-1};
          Rng rng(5);
          const int T = std::min(task->sequenceLength(160), 160);
          Batch b = task->sample(4, std::max(T, task->minSequenceLength()), Split::Train, rng);
          b.inputs.insert(b.inputs.end(), b.targets.begin(), b.targets.end());
          b.inputs.push_back(task->vocabulary().size());
          return b.inputs;
        };
        if (sample(base) == sample(moved))
          QFAIL(qPrintable(QString("%1: %2 = %3 samples exactly the default's data").arg(entry.name.c_str(), s.key.c_str()).arg(moved.settings[s.key])));
      }
    }
  }

  // a = softmax(beta s) over the window, from the trace's scores, at beta = 2.5 and w = 5.
  void softmaxFamilyAtNonDefaultTemperatureAndWindow() {
    for (const std::string variant : {"softmax", "window", "momentum"}) {
      ModelConfig c = testing::smallConfig(variant, "alibi", 9, 12);
      c.attention_settings = {{"temperature", 2.5}, {"window", 5}};
      const Trace trace = testing::traceOf(*testing::randomisedModel(c), kTokens);
      const int window = variant == "window" ? 5 : 0;
      for (const auto& layer : trace.layers)
        for (const HeadTrace& h : layer.heads) {
          Mat logits = 2.5f * h.scores;
          const double d = maxDifference(softmaxRows(logits, window), h.weights);
          if (d > 2e-6) QFAIL(qPrintable(QString("%1: weights differ from softmax(2.5 s) by %2").arg(variant.c_str()).arg(d)));
        }
    }
  }

  // a = sigmoid(beta s - log(i + 1)) at beta = 0.5.
  void sigmoidAtNonDefaultTemperature() {
    ModelConfig c = testing::smallConfig("sigmoid", "rope", 9, 12);
    c.attention_settings = {{"temperature", 0.5}};
    const Trace trace = testing::traceOf(*testing::randomisedModel(c), kTokens);
    for (const auto& layer : trace.layers)
      for (const HeadTrace& h : layer.heads)
        for (int i = 0; i < h.weights.rows(); ++i)
          for (int j = 0; j <= i; ++j) {
            const double expected = 1 / (1 + std::exp(-(0.5 * h.scores(i, j) - std::log(i + 1.0))));
            if (std::abs(h.weights(i, j) - expected) > 2e-6)
              QFAIL(qPrintable(QString("a(%1,%2) = %3, expected %4").arg(i).arg(j).arg(h.weights(i, j)).arg(expected)));
          }
  }

  // angle(t, m) = (t / linear_scale) (theta ntk^(d/(d-2)))^(-2m/d) at theta 500, ntk 4, linear 3.
  void ropeAnglesAtNonDefaultSettings() {
    ModelConfig c = wideHeads("softmax", "rope");
    c.positional_settings = {{"theta", 500}, {"ntk_scale", 4}, {"linear_scale", 3}, {"rotary_fraction", 0.75}};
    auto rope = PositionalRegistry::instance().create("rope");
    ParamStore params;
    QVERIFY(rope->configure(c, params).empty());
    const int d = c.headDim(), pairs = rope->rotaryPairs();
    QCOMPARE(pairs, 6);  // 0.75 of 8 pairs
    std::vector<int> pos(10);
    for (int t = 0; t < 10; ++t) pos[t] = t;
    Mat angles;
    rope->rotaryAngles(0, Mat(), pos.data(), 1, 10, angles);
    const double base = 500 * std::pow(4.0, static_cast<double>(d) / (d - 2));
    for (int t = 0; t < 10; ++t)
      for (int m = 0; m < pairs; ++m) {
        const double expected = t / 3.0 * std::pow(base, -2.0 * m / d);
        if (std::abs(angles(t, m) - expected) > 1e-6 * std::max(1.0, expected))
          QFAIL(qPrintable(QString("angle(%1, %2) = %3, expected %4").arg(t).arg(m).arg(angles(t, m)).arg(expected)));
      }
  }
};

QTEST_APPLESS_MAIN(TestFormulaSettings)
#include "test_formula_settings.moc"
