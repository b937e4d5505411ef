// Latent KV (multi-head latent attention, MLA): keys and values are up-projections of one latent
// c = W_DKV x. The parameters are W_q, W_DKV, W_UK, W_UV; the absorbed score (W_UK^T q) . c equals
// the expanded q . k the forward scores; gradients match finite differences; decoding from a
// cache that holds only the latents equals the full forward for every variant that decodes, and
// the cache holds exactly 4 d_c bytes per token and layer (rowBytes(int8, d_c) when quantised).
// RoPE, per-head eviction and key-filtering variants are refused in one line.
#include <QtTest>

#include <cmath>
#include <stdexcept>

#include "grad_check.h"
#include "interpret/interpret_support.h"
#include "kv/decoder.h"
#include "kv/kv_bytes.h"
#include "model/projection_sharing.h"

using namespace attnlab;
using testing::randomisedModel;
using testing::smallConfig;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1, 4, 4};
constexpr int kLatent = 6;

ModelConfig latentConfig(const std::string& attention, const std::string& positional) {
  ModelConfig c = smallConfig(attention, positional, 9, 16);
  c.projection_sharing = "latent";
  c.kv_latent_dim = kLatent;
  return c;
}

Mat fullLogits(const Model& model) {
  auto ws = makeWorkspace();
  const std::vector<int> targets(kTokens.size(), -1);
  model.forward(*ws, kTokens.data(), targets.data(), 1, static_cast<int>(kTokens.size()));
  return workspaceLogits(*ws);
}

// Decodes kTokens through the dense cache; returns the largest |decoded - full| logit relative to
// the logits' scale, or -1 when after some step the bytes held are not exactly
// (tokens so far) x rowBytes(quant, d_c) per caching layer, all of them in the layer's latents.
double decodeErrorCheckingBytes(const Model& model, KvQuant quant = KvQuant::fp32) {
  Decoder decoder(model, makeEvictionPolicy("full", {}, model.config()), "full", Budget{}, false, quant);
  const Mat full = fullLogits(model);
  const size_t row = RowStore::rowBytes(quant, kLatent);
  double worst = 0;
  for (size_t t = 0; t < kTokens.size(); ++t) {
    const Mat& logits = decoder.step(kTokens[t]);
    worst = std::max(worst, static_cast<double>((logits - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
    size_t expected = 0;
    for (int l = 0; l < model.config().n_layers; ++l) {
      if (!decoder.cachesLayer(l)) continue;
      expected += (t + 1) * row;
      if (decoder.cache().latents(l).rows() != static_cast<int>(t + 1)) return -1;
      for (int h = 0; h < decoder.cache().kvHeads(); ++h)
        if (decoder.cache().head(l, h).bytes() != 0) return -1;  // no per-head rows besides the latents
    }
    if (decoder.record().bytes != expected) return -1;
  }
  return worst / std::max(1.0f, full.cwiseAbs().maxCoeff());
}

}  // namespace

class TestLatentKv : public QObject {
  Q_OBJECT

 private slots:
  void parametersAreTheLatentProjections() {
    ModelConfig c = latentConfig("softmax", "alibi");
    c.n_kv_heads = 2;
    c.qkv_bias = true;
    Model model(c, 1);
    const int dh = c.headDim();
    const std::vector<std::pair<std::string, std::vector<int>>> expected = {
        {"wq.weight", {4 * dh, 16}},      {"wdkv.weight", {kLatent, 16}}, {"wuk.weight", {2 * dh, kLatent}},
        {"wuv.weight", {2 * dh, kLatent}}, {"wuk.bias", {2 * dh}},          {"wuv.bias", {2 * dh}}};
    for (const auto& [name, shape] : expected) {
      const Param* p = model.params().find("blocks.0.attn." + name);
      QVERIFY2(p, name.c_str());
      QCOMPARE(p->shape, shape);
    }
    for (const char* absent : {"wk.weight", "wv.weight", "wkv.weight", "wdkv.bias"})
      QVERIFY(!model.params().find(std::string("blocks.0.attn.") + absent));
  }

  // The cache's claim, 4 d_c bytes per token and layer whatever the heads, in the byte count the
  // lab reports before decoding.
  void bytesPerTokenAreTheLatent() {
    ModelConfig c = latentConfig("softmax", "alibi");
    QCOMPARE(kvCacheBytesPerToken(c), size_t(4 * kLatent * 2));
    c.n_kv_heads = 1;
    QCOMPARE(kvCacheBytesPerToken(c), size_t(4 * kLatent * 2));
    QCOMPARE(kvCacheBytesPerToken(c, KvQuant::int8), RowStore::rowBytes(KvQuant::int8, kLatent) * 2);
    c.attention = {"linear", "softmax"};  // a layer with a constant-size state holds no latents
    QCOMPARE(kvCacheBytesPerToken(c), size_t(4 * kLatent));
    c.kv_latent_dim = 0;  // 0 means d_model / 4
    QCOMPARE(kvCacheBytesPerToken(c), size_t(4 * 16 / 4));
  }

  // q . k = q . (W_UK c + b) = (W_UK^T q) . c + q . b: the score read from the cached latent
  // alone, without expanding the key, is the score the forward computes.
  void absorbedScoreEqualsExpanded() {
    ModelConfig c = latentConfig("softmax", "learned");
    c.n_kv_heads = 2;
    c.qkv_bias = true;
    const auto model = randomisedModel(c);
    const AttentionLayer& layer = model->attentionLayer(1);
    const int T = 7, H = c.n_heads, dh = c.headDim(), group = H / c.kvHeads();
    Rng rng(5);
    Mat x(T, c.d_model);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal(0.f, 1.f);
    std::vector<int> pos(T), tokens(T, 0);
    for (int t = 0; t < T; ++t) pos[t] = t;
    AttentionActs acts;
    acts.tokens = tokens.data();
    Mat y;
    layer.forward(x, x, pos.data(), 1, T, acts, y);
    QCOMPARE(static_cast<int>(acts.latent.cols()), kLatent);
    const Param& wuk = *model->params().find("blocks.1.attn.wuk.weight");
    const Param& buk = *model->params().find("blocks.1.attn.wuk.bias");
    double worst = 0, scale = 0;
    for (int h = 0; h < H; ++h) {
      const int g = h / group;
      const auto Wg = wuk.value.middleRows(g * dh, dh);  // [dh, d_c]
      for (int i = 0; i < T; ++i) {
        const Eigen::Map<const Eigen::VectorXf> q(acts.q.data() + (static_cast<size_t>(h) * T + i) * dh, dh);
        const Eigen::VectorXf absorbedQuery = Wg.transpose() * q;  // [d_c]
        const float queryBias = q.dot(buk.value.row(0).segment(g * dh, dh).transpose());
        for (int j = 0; j <= i; ++j) {
          const Eigen::Map<const Eigen::VectorXf> k(acts.k.data() + (static_cast<size_t>(g) * T + j) * dh, dh);
          const double expanded = q.dot(k);
          const double absorbed = absorbedQuery.dot(acts.latent.row(j).transpose()) + queryBias;
          worst = std::max(worst, std::abs(expanded - absorbed));
          scale = std::max(scale, std::abs(expanded));
          // and the forward's score is the expanded product, scaled
          const double score = acts.scores[(static_cast<size_t>(h) * T + i) * T + j];
          QVERIFY(std::abs(score - expanded / std::sqrt(static_cast<double>(dh))) < 1e-4 * std::max(1.0, scale));
        }
      }
    }
    QVERIFY2(scale > 0.1, "scores must not be trivially zero");
    QVERIFY2(worst < 1e-5 * std::max(1.0, scale), qPrintable(QString("absorbed vs expanded: %1").arg(worst)));
  }

  // The interpretation tools read a head's key and value maps of the (normalised) input: with
  // latent KV they are W_UK W_DKV and W_UV W_DKV, and they reproduce the forward's keys and values.
  void headWeightsComposeTheLatent() {
    ModelConfig c = latentConfig("softmax", "learned");
    c.n_kv_heads = 2;
    const auto model = randomisedModel(c);
    const AttentionLayer& layer = model->attentionLayer(0);
    const int T = 5, dh = c.headDim();
    Rng rng(8);
    Mat x(T, c.d_model);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal(0.f, 1.f);
    std::vector<int> pos = {0, 1, 2, 3, 4}, tokens(T, 0);
    AttentionActs acts;
    acts.tokens = tokens.data();
    Mat y;
    layer.forward(x, x, pos.data(), 1, T, acts, y);
    const Eigen::VectorXd gain = model->params().find("blocks.0.ln1.weight")->value.row(0).transpose().cast<double>();
    double worst = 0;
    for (int h = 0; h < c.n_heads; ++h) {
      const HeadWeights w = headWeights(*model, 0, h);
      const int g = h / (c.n_heads / c.kvHeads());
      for (int j = 0; j < T; ++j) {
        const Eigen::VectorXd u = x.row(j).transpose().cast<double>().cwiseQuotient(gain);  // the input before the norm's gain
        const Eigen::Map<const Eigen::VectorXf> k(acts.k.data() + (static_cast<size_t>(g) * T + j) * dh, dh);
        const Eigen::Map<const Eigen::VectorXf> v(acts.v.data() + (static_cast<size_t>(g) * T + j) * dh, dh);
        worst = std::max({worst, (w.k * u - k.cast<double>()).cwiseAbs().maxCoeff(), (w.v * u - v.cast<double>()).cwiseAbs().maxCoeff()});
      }
    }
    QVERIFY2(worst < 1e-4, qPrintable(QString("head weights vs forward: %1").arg(worst)));
  }

  void gradientsMatchFiniteDifferences_data() {
    QTest::addColumn<QString>("attention");
    QTest::addColumn<QString>("option");
    QTest::newRow("softmax") << "softmax" << "";
    QTest::newRow("softmax/mqa") << "softmax" << "mqa";
    QTest::newRow("sigmoid/bias+value_gate") << "sigmoid" << "bias,value_gate";
    QTest::newRow("linear") << "linear" << "";
    QTest::newRow("qk_norm/alibi") << "qk_norm" << "alibi";
  }
  void gradientsMatchFiniteDifferences() {
    QFETCH(QString, attention);
    QFETCH(QString, option);
    ModelConfig c = testing::gradCheckConfig(attention.toStdString(), option.contains("alibi") ? "alibi" : "learned");
    c.projection_sharing = "latent";
    c.kv_latent_dim = 3;
    if (option.contains("mqa")) c.n_kv_heads = 1;
    if (option.contains("bias")) c.qkv_bias = true;
    if (option.contains("value_gate")) c.value_gate = true;
    Model model(c, 2);
    testing::randomiseParams(model, 9, 0.3f);
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 4), "latent " + attention.toStdString() + " " + option.toStdString());
  }

  void decodeEqualsForward_data() {
    QTest::addColumn<QString>("attention");
    QTest::addColumn<QString>("option");
    for (const auto& entry : AttentionRegistry::instance().entries()) QTest::newRow(entry.name.c_str()) << QString::fromStdString(entry.name) << "";
    for (const char* opt : {"gqa", "mqa", "value_gate", "retention", "output_gate", "bias", "bf16"})
      QTest::newRow(qPrintable(QString("softmax+") + opt)) << "softmax" << opt;
    QTest::newRow("sigmoid+gqa,value_gate") << "sigmoid" << "gqa,value_gate";
  }
  void decodeEqualsForward() {
    QFETCH(QString, attention);
    QFETCH(QString, option);
    ModelConfig c = latentConfig(attention.toStdString(), "alibi");
    c.attention_settings["window"] = 5;
    if (option.contains("gqa")) c.n_kv_heads = 2;
    if (option.contains("mqa")) c.n_kv_heads = 1;
    if (option.contains("value_gate")) c.value_gate = true;
    if (option.contains("retention")) c.retention_gate = true;
    if (option.contains("output_gate")) c.output_gate = "elementwise";
    if (option.contains("bias")) c.qkv_bias = true;
    if (option.contains("bf16")) c.score_precision = "bf16";
    const auto model = randomisedModel(c);
    try {
      const double error = decodeErrorCheckingBytes(*model);
      QVERIFY2(error >= 0, "the cache holds other bytes than the latents");
      QVERIFY2(error < 2e-5, qPrintable(QString("relative error %1").arg(error)));
    } catch (const std::invalid_argument& e) {
      // a variant may refuse latent decoding only because it filters its keys (momentum), or
      // because it cannot decode from a cache at all, with or without latents
      const std::string why = e.what();
      ModelConfig plain = c;
      plain.projection_sharing = "qkv", plain.kv_latent_dim = 0;
      bool plainDecodes = true;
      try {
        Decoder(Model(plain, 1), makeEvictionPolicy("full", {}, plain), "full", Budget{});
      } catch (const std::invalid_argument&) {
        plainDecodes = false;
      }
      QVERIFY2(!plainDecodes || why.find("filters its keys") != std::string::npos, why.c_str());
    }
  }

  void quantisedLatentsHoldTheirBytes() {
    const auto model = randomisedModel(latentConfig("softmax", "alibi"));
    const double error = decodeErrorCheckingBytes(*model, KvQuant::int8);
    QVERIFY2(error >= 0, "the int8 cache holds other bytes than the latents");
    QVERIFY2(error < 0.05, qPrintable(QString("int8 latents: relative error %1").arg(error)));
    QVERIFY(error > 0);  // the stored latents were rounded, and attention read them
  }

  void refusalsAreOneLine() {
    ExperimentConfig e;
    e.model = latentConfig("softmax", "rope");
    std::string why = validate(e);
    QVERIFY2(why.find("rotary") != std::string::npos, why.c_str());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Model(e.model, 1));
    e.model = smallConfig("softmax", "alibi");
    e.model.kv_latent_dim = 4;
    why = validate(e);
    QVERIFY2(why.find("latent") != std::string::npos, why.c_str());
    e.model = latentConfig("softmax", "alibi");
    e.model.kv_latent_dim = -2;
    QVERIFY(!validate(e).empty());
    // one latent serves every head of a layer: per-head eviction is refused
    const Model model(latentConfig("softmax", "alibi"), 1);
    Budget b;
    parseBudget("4", "head", b);
    try {
      Decoder d(model, makeEvictionPolicy("window", {}, model.config()), "window", b);
      QFAIL("a per-head eviction policy decoded latent KV");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("latent") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestLatentKv)
#include "test_latent_kv.moc"
