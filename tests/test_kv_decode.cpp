// Incremental decoding through the KV cache equals the full forward pass when nothing is
// evicted: every registered variant that decodes (those filtering their keys, as momentum, also
// from the filtered keys), every registered positional encoding, projection sharing, grouped heads
// and every gate. Window attention also after the cache evicted what its mask hides. Every
// registered eviction policy keeps within its budget, and those whose budget alone decides keep it exactly.
#include <QtTest>

#include "model_support.h"

#include <cmath>

#include <algorithm>
#include <set>

#include "attention/attention.h"
#include "core/random.h"
#include "kv/decoder.h"
#include "model/model.h"
#include "model/workspace.h"

using namespace attnlab;

namespace {
using testing::smallConfig;
using testing::randomisedModel;

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1, 4, 4};
Mat fullLogits(const Model& model, const std::vector<int>& tokens) {
  auto ws = makeWorkspace();
  const std::vector<int> targets(tokens.size(), -1);
  model.forward(*ws, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()));
  return workspaceLogits(*ws);
}

// The registry's dense reference (it keeps everything): what decoding must equal the forward pass with.
std::string denseReferencePolicy() {
  for (const auto& e : EvictionPolicyRegistry::instance().entries())
    if (e.make()->isDenseReference()) return e.name;
  return {};
}

std::unique_ptr<Decoder> decoderOf(const Model& model, const std::string& policy = denseReferencePolicy(), const std::string& budget = "") {
  Budget b;
  if (!budget.empty()) parseBudget(budget, "head", b);
  return std::make_unique<Decoder>(model, makeEvictionPolicy(policy, {}, model.config()), policy, b);
}

// Largest |decoded - full| over every position and logit, relative to the logits' scale.
double decodeError(const Model& model, Decoder& decoder, const std::vector<int>& tokens) {
  const Mat full = fullLogits(model, tokens);
  double worst = 0;
  decoder.reset();
  for (size_t t = 0; t < tokens.size(); ++t) {
    const Mat& row = decoder.step(tokens[t]);
    worst = std::max(worst, static_cast<double>((row - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
  }
  return worst / std::max(1.0f, full.cwiseAbs().maxCoeff());
}

QStringList registeredNames(const auto& registry) {
  QStringList names;
  for (const auto& e : registry.entries()) names << QString::fromStdString(e.name);
  return names;
}

// The variants the decoder can step one token at a time, asked as the decoder asks: a recurrent
// state, or decodeRow on an empty row (multi-token attention has neither).
QStringList decodingVariants() {
  const ModelConfig c = smallConfig("softmax", "none");
  const int dHead = c.d_model / c.n_heads;
  const std::vector<float> zeros(dHead, 0.0f);
  std::vector<float> o(dHead);
  DecodeRowInputs emptyRow;
  emptyRow.q = zeros.data();
  emptyRow.dHead = dHead;
  QStringList names;
  for (const auto& e : AttentionRegistry::instance().entries()) {
    const auto variant = e.make();
    ParamStore params;
    variant->configure(c, "probe.", params);  // creates what decodeRow reads
    if (variant->cachesKeysAndValues() ? variant->decodeRow(emptyRow, o.data(), nullptr) : variant->recurrentState(0, dHead) != nullptr)
      names << QString::fromStdString(e.name);
  }
  return names;
}

// Variants that score transformed queries and keys while decoding (momentum's high-pass), so
// their cache holds filtered keys.
bool filtersKeys(const QString& variant) {
  std::vector<float> q, k;
  return AttentionRegistry::instance().create(variant.toStdString())->filterDecodeInputs(q, k, {}, {});
}

bool declaresSetting(const QString& variant, const std::string& key) {
  const auto specs = AttentionRegistry::instance().create(variant.toStdString())->settingSpecs();
  return std::any_of(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.key == key; });
}

// The model the budget checks decode with: grouped heads, so that a layer has several KV heads.
ModelConfig budgetModel() {
  ModelConfig c = smallConfig("softmax", "rope", 9, 32);
  c.n_kv_heads = 2;
  return c;
}
// The same with a retention gate, so that policies reading it (learned_gate) take part in the bound check.
ModelConfig gatedBudgetModel() {
  ModelConfig c = budgetModel();
  c.retention_gate = true;
  return c;
}

// The policy configured for `c`, or null when it refuses the model (e.g. it reads a gate the model lacks).
std::unique_ptr<EvictionPolicy> configuredPolicy(const std::string& name, const ModelConfig& c) {
  auto policy = EvictionPolicyRegistry::instance().create(name);
  return policy->configure({}, c).empty() ? std::move(policy) : nullptr;
}

// Whether the policy gives every layer the uniform per-head budget (PyramidKV does not).
bool uniformAcrossLayers(const EvictionPolicy& policy, int layers) {
  for (int uniform = 1; uniform <= 32; ++uniform)
    for (int l = 0; l < layers; ++l)
      if (policy.layerBudget(uniform, l, layers) != uniform) return false;
  return true;
}

struct RatioRow {
  QString policy, ratio, scope;
};
// Exact ratio budgets: the policies whose budget alone decides what stays (not the dense reference,
// not those deciding without one), spread evenly over the layers; per head only where heads do not pool.
std::vector<RatioRow> exactRatioRows() {
  const ModelConfig c = budgetModel();
  std::vector<RatioRow> rows;
  for (const auto& e : EvictionPolicyRegistry::instance().entries()) {
    const auto policy = configuredPolicy(e.name, c);
    if (!policy || policy->isDenseReference() || !policy->needsBudget() || !uniformAcrossLayers(*policy, c.n_layers)) continue;
    const QString name = QString::fromStdString(e.name);
    if (!policy->poolsHeads())
      for (const char* ratio : {"25%", "60%"}) rows.push_back({name, ratio, "head"});
    for (const char* ratio : {"30%", "50%"}) rows.push_back({name, ratio, "layer"});
  }
  return rows;
}

// Every policy that takes a budget (all but the dense reference) and accepts the gated model.
QStringList budgetedPolicies() {
  QStringList names;
  for (const auto& e : EvictionPolicyRegistry::instance().entries()) {
    const auto policy = configuredPolicy(e.name, gatedBudgetModel());
    if (policy && !policy->isDenseReference()) names << QString::fromStdString(e.name);
  }
  return names;
}

}  // namespace

class TestKvDecode : public QObject {
  Q_OBJECT

 private slots:
  void decodeEqualsForward_data() {
    QTest::addColumn<QString>("attention");
    QTest::addColumn<QString>("positional");
    QTest::addColumn<QString>("option");
    const QStringList variants = decodingVariants();
    const QStringList encodings = registeredNames(PositionalRegistry::instance());
    QVERIFY(!variants.isEmpty() && !encodings.isEmpty());
    for (const auto& v : variants)
      for (const auto& p : encodings) QTest::newRow(qPrintable(v + "/" + p)) << v << p << QString();
    // the parts around the variant
    for (const auto& v : variants) {
      for (const auto& opt : {"retention", "gqa", "mqa", "q_k=v", "q=k_v", "q=k=v", "value_gate", "output_gate", "bf16",
                              "random_rotation", "rotate_values"})
        QTest::newRow(qPrintable(v + "/rope+" + opt)) << v << QString("rope") << QString(opt);
      if (declaresSetting(v, "sigmoid_bias_learned")) QTest::newRow(qPrintable(v + "/rope+learned_sigmoid_bias")) << v << QString("rope") << QString("learned_sigmoid_bias");
    }
    QTest::newRow("window/alibi+retention+gqa") << QString("window") << QString("alibi") << QString("retention,gqa");
    // a cache of filtered keys: never the values, even where the projections are shared
    for (const auto& v : variants)
      if (filtersKeys(v))
        for (const char* opt : {"q_k=v", "q=k=v", "gqa", "retention", "gamma", "value_gate"})
          QTest::newRow(qPrintable(v + "/alibi+" + opt)) << v << QString("alibi") << QString(opt);
  }
  void decodeEqualsForward() {
    QFETCH(QString, attention);
    QFETCH(QString, positional);
    QFETCH(QString, option);
    ModelConfig c = smallConfig(attention.toStdString(), positional.toStdString(), 9, 16);
    c.attention_settings["window"] = 5;
    for (const QString& opt : option.split(',', Qt::SkipEmptyParts)) {
      if (opt == "retention") c.retention_gate = true;
      if (opt == "gqa") c.n_kv_heads = 2;
      if (opt == "mqa") c.n_kv_heads = 1;
      if (opt.startsWith("q")) c.projection_sharing = opt.toStdString();
      if (opt == "value_gate") c.value_gate = true;
      if (opt == "output_gate") c.output_gate = "elementwise";
      if (opt == "bf16") c.score_precision = "bf16";
      if (opt == "random_rotation" || opt == "rotate_values") {
        c.positional = "accumulated_rotation";
        c.positional_settings[opt == "random_rotation" ? "omega_mode" : "rotate_values"] = 1;
      }
      if (opt == "learned_sigmoid_bias") c.attention_settings["sigmoid_bias_learned"] = 1;
      if (opt == "gamma") c.attention_settings["momentum_gamma"] = -0.7, c.attention_settings["temperature"] = 1.6;
    }
    if (attention == "linear" && c.score_precision != "fp32") QSKIP("linear attention's state does not emulate rounding of m_ij");
    const auto model = randomisedModel(c);
    const auto decoder = decoderOf(*model);
    const double error = decodeError(*model, *decoder, kTokens);
    QVERIFY2(error < 2e-5, qPrintable(QString("relative error %1").arg(error)));
    // nothing was evicted: every caching layer holds every position
    for (const HeadOccupancy& h : decoder->record().heads) QCOMPARE(static_cast<int>(h.live.size()), static_cast<int>(kTokens.size()));
  }

  // A step attends over the live entries plus its own new one, then evicts down to the budget, so
  // a budget of w - 1 holds exactly what a window of w shows the next query: the window's mask
  // already hides what the policy evicts, and decoding stays exact after the first eviction.
  void windowAttentionAfterEviction() {
    ModelConfig c = smallConfig("window", "rope", 9, 16);
    c.attention_settings["window"] = 5;
    const auto model = randomisedModel(c);
    const auto decoder = decoderOf(*model, "window", "4");
    QVERIFY(decodeError(*model, *decoder, kTokens) < 2e-5);
    for (const HeadOccupancy& h : decoder->record().heads) QCOMPARE(h.live, (std::vector<int>{10, 11, 12, 13}));
    // and a budget one shorter changes the result
    const auto tight = decoderOf(*model, "window", "3");
    QVERIFY(decodeError(*model, *tight, kTokens) > 1e-3);
  }

  // ALiBi and RoPE stay correct after eviction because positions travel with the entries:
  // decoding with eviction equals a full forward in which the evicted keys are masked out,
  // which for the last query of a window-evicted cache is window attention of the same width.
  void positionsSurviveEviction() {
    for (const char* pos : {"rope", "alibi"}) {
      ModelConfig dense = smallConfig("softmax", pos, 9, 16);
      ModelConfig windowed = dense;
      windowed.attention = {"window"};
      windowed.attention_settings["window"] = 6;
      const auto a = randomisedModel(dense);
      const auto b = randomisedModel(windowed);  // same seed and shapes: the same weights
      const auto decoder = decoderOf(*a, "window", "5");
      QVERIFY2(decodeError(*b, *decoder, kTokens) < 2e-5, pos);
    }
  }

  // Compression at a ratio acts during decoding, not only at the end: after every step each KV
  // head of a uniform per-head policy holds exactly ceil(r x positions seen) entries, and under a
  // per-layer ratio each layer's heads hold that many times the heads between them.
  void ratioBudgetHoldsAtEveryStep_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("ratio");
    QTest::addColumn<QString>("scope");
    const auto rows = exactRatioRows();
    QVERIFY(!rows.empty());
    for (const RatioRow& r : rows)
      QTest::newRow(qPrintable(QString("%1 %2%3").arg(r.policy, r.ratio, r.scope == "layer" ? " per layer" : ""))) << r.policy << r.ratio << r.scope;
  }
  void ratioBudgetHoldsAtEveryStep() {
    QFETCH(QString, policy);
    QFETCH(QString, ratio);
    QFETCH(QString, scope);
    const ModelConfig c = budgetModel();
    const auto model = randomisedModel(c);
    Budget budget;
    QCOMPARE(QString::fromStdString(parseBudget(ratio.toStdString(), scope.toStdString(), budget)), QString());
    Decoder decoder(*model, makeEvictionPolicy(policy.toStdString(), {}, c), policy.toStdString(), budget);
    const double r = ratio.chopped(1).toDouble() / 100;
    Rng rng(4);
    for (int seen = 1; seen <= 30; ++seen) {
      decoder.step(rng.uniformInt(0, c.vocab - 1));
      const int each = std::max(1, static_cast<int>(std::ceil(r * seen - 1e-9)));
      std::vector<int> perLayer(c.n_layers, 0);
      for (const HeadOccupancy& h : decoder.record().heads) {
        perLayer[h.layer] += static_cast<int>(h.live.size());
        if (scope == "head")
          QVERIFY2(static_cast<int>(h.live.size()) == each,
                   qPrintable(QString("step %1, layer %2 head %3: %4 live, ceil(%5 x %1) = %6").arg(seen).arg(h.layer).arg(h.kvHead).arg(h.live.size()).arg(r).arg(each)));
      }
      for (int l = 0; l < c.n_layers; ++l) QCOMPARE(perLayer[l], each * c.kvHeads());
    }
  }

  // Whatever else decides (a gate threshold, streaming heads, pyramidal or pooled budgets), no
  // policy keeps more than its budget: per head its layer's share (unless its heads pool), per
  // layer that share times the KV heads.
  void withinBudgetAtEveryStep_data() {
    QTest::addColumn<QString>("policy");
    const QStringList policies = budgetedPolicies();
    QVERIFY(!policies.isEmpty());
    for (const QString& p : policies) QTest::newRow(qPrintable(p)) << p;
  }
  void withinBudgetAtEveryStep() {
    QFETCH(QString, policy);
    const ModelConfig c = gatedBudgetModel();
    const auto model = randomisedModel(c);
    Budget budget;
    QCOMPARE(QString::fromStdString(parseBudget("40%", "head", budget)), QString());
    auto configured = makeEvictionPolicy(policy.toStdString(), {}, c);
    const EvictionPolicy& rules = *configured;
    Decoder decoder(*model, std::move(configured), policy.toStdString(), budget);
    Rng rng(4);
    for (int seen = 1; seen <= 30; ++seen) {
      decoder.step(rng.uniformInt(0, c.vocab - 1));
      std::vector<int> perLayer(c.n_layers, 0);
      for (const HeadOccupancy& h : decoder.record().heads) {
        const int share = rules.layerBudget(budget.entriesFor(seen), h.layer, c.n_layers);
        perLayer[h.layer] += static_cast<int>(h.live.size());
        if (!rules.poolsHeads())
          QVERIFY2(static_cast<int>(h.live.size()) <= share,
                   qPrintable(QString("step %1, layer %2 head %3: %4 live, budget %5").arg(seen).arg(h.layer).arg(h.kvHead).arg(h.live.size()).arg(share)));
      }
      for (int l = 0; l < c.n_layers; ++l) QVERIFY(perLayer[l] <= rules.layerBudget(budget.entriesFor(seen), l, c.n_layers) * c.kvHeads());
    }
  }

  // A member registered tomorrow is tested the moment it registers: every encoding and every
  // eviction policy takes part in a check above (the dense reference in decodeEqualsForward). The
  // variants that cannot decode are covered by the gradient suites, which take every variant.
  void everyRegisteredMemberTakesPart() {
    const QString dense = QString::fromStdString(denseReferencePolicy());
    QVERIFY(!dense.isEmpty());
    std::set<QString> policies = {dense};
    for (const RatioRow& r : exactRatioRows()) policies.insert(r.policy);
    for (const QString& p : budgetedPolicies()) policies.insert(p);
    for (const QString& p : registeredNames(EvictionPolicyRegistry::instance())) QVERIFY2(policies.count(p), qPrintable(p + " is in no check"));
    QVERIFY(!decodingVariants().isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestKvDecode)
#include "test_kv_decode.moc"
