// Incremental decoding through the KV cache equals the full forward pass when nothing is
// evicted: every variant (momentum from its filtered keys), every positional encoding, projection sharing, grouped
// heads and every gate. Window attention also after the cache evicted what its mask hides.
#include <QtTest>

#include "model_support.h"

#include <cmath>

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

std::unique_ptr<Decoder> decoderOf(const Model& model, const std::string& policy = "full", const std::string& budget = "") {
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

}  // namespace

class TestKvDecode : public QObject {
  Q_OBJECT

 private slots:
  void decodeEqualsForward_data() {
    QTest::addColumn<QString>("attention");
    QTest::addColumn<QString>("positional");
    QTest::addColumn<QString>("option");
    const QStringList variants = {"softmax", "sigmoid", "window", "oattention", "linear", "qk_norm", "softmax_sink", "l1_score",
                                  "static_map", "no_mixing", "deltanet", "gated_deltanet", "momentum"};
    const QStringList encodings = {"none", "sinusoidal", "learned", "rope", "alibi", "alibi_log", "accumulated_rotation"};
    for (const auto& v : variants)
      for (const auto& p : encodings) QTest::newRow(qPrintable(v + "/" + p)) << v << p << QString();
    // the parts around the variant
    for (const auto& v : {QString("softmax"), QString("sigmoid"), QString("linear"), QString("oattention"), QString("deltanet")})
      for (const auto& opt : {"retention", "gqa", "mqa", "q_k=v", "q=k_v", "q=k=v", "value_gate", "output_gate", "bf16",
                              "random_rotation", "rotate_values", "learned_sigmoid_bias"})
        QTest::newRow(qPrintable(v + "/rope+" + opt)) << v << QString("rope") << QString(opt);
    QTest::newRow("window/alibi+retention+gqa") << QString("window") << QString("alibi") << QString("retention,gqa");
    // momentum's cache holds filtered keys: never the values, even where the projections are shared
    for (const char* opt : {"q_k=v", "q=k=v", "gqa", "retention", "gamma", "value_gate"})
      QTest::newRow(qPrintable(QString("momentum/alibi+") + opt)) << QString("momentum") << QString("alibi") << QString(opt);
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
    if (attention == "deltanet" && option == "learned_sigmoid_bias") QSKIP("a sigmoid setting: nothing new for DeltaNet");
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
    for (const char* policy : {"window", "h2o", "snapkv", "tova", "streaming_llm", "k_norm", "keydiff", "random"})
      for (const char* ratio : {"25%", "60%"}) QTest::newRow(qPrintable(QString("%1 %2").arg(policy, ratio))) << policy << ratio << "head";
    QTest::newRow("h2o 30% per layer") << "h2o" << "30%" << "layer";
    QTest::newRow("snapkv 50% per layer") << "snapkv" << "50%" << "layer";
  }
  void ratioBudgetHoldsAtEveryStep() {
    QFETCH(QString, policy);
    QFETCH(QString, ratio);
    QFETCH(QString, scope);
    ModelConfig c = smallConfig("softmax", "rope", 9, 32);
    c.n_kv_heads = 2;
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
};

QTEST_APPLESS_MAIN(TestKvDecode)
#include "test_kv_decode.moc"
