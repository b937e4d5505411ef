// The seeds' mechanisms as attention variants: QK-norm, the learnable sink, the L1-augmented
// score and deconstructed attention (static map, no mixing). Each one's exact contract, its
// finite-difference gradients (every new parameter included), and decoding = the full forward.
#include <QtTest>

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "attention/attention.h"
#include "attention/content_free.h"
#include "grad_check.h"
#include "kv/decoder.h"
#include "model/model.h"
#include "model/workspace.h"
#include "model_support.h"

using namespace attnlab;

namespace {
using testing::randomisedModel;
using testing::smallConfig;
using testing::traceOf;

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1};
const char* const kNewVariants[] = {"qk_norm", "softmax_sink", "l1_score", "static_map", "no_mixing"};

Param& paramNamed(Model& model, const std::string& name) {
  Param* p = model.params().find(name);
  if (!p) throw std::runtime_error("no parameter " + name);
  return *p;
}

// Every parameter the two models share by name takes `from`'s value in `to`.
void copySharedParams(const Model& from, Model& to) {
  for (const auto& p : from.params().all())
    if (Param* q = to.params().find(p->name)) q->value = p->value;
}

double largestMapDifference(const Trace& a, const Trace& b) {
  double worst = 0;
  for (size_t l = 0; l < a.layers.size(); ++l)
    for (size_t h = 0; h < a.layers[l].heads.size(); ++h)
      worst = std::max(worst, static_cast<double>((a.layers[l].heads[h].weights - b.layers[l].heads[h].weights).cwiseAbs().maxCoeff()));
  return worst;
}

ModelConfig gradConfig(const std::string& variant, const std::string& positional) { return testing::gradCheckConfig(variant, positional); }
}  // namespace

class TestMechanismVariants : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  void eachIsRegisteredWithItsFormula() {
    for (const char* name : kNewVariants) {
      const auto* entry = AttentionRegistry::instance().find(name);
      QVERIFY2(entry, name);
      QVERIFY(entry->summary.find("a_ij") != std::string::npos || entry->summary.find("s_ij") != std::string::npos);
    }
  }

  // --- QK-norm ---------------------------------------------------------------------------------
  // |s_ij| <= tau_h for every visible score (no positional bias here), tau_h starts at sqrt(d_head).
  void qkNormScoresAreBoundedByTau() {
    ModelConfig c = smallConfig("qk_norm", "rope");
    Model fresh(c, 3);
    QCOMPARE(paramNamed(fresh, "blocks.0.attn.qk_norm_tau").value(0, 2), 2.0f);  // d_head = 16 / 4
    const auto model = randomisedModel(c, 1.5f);  // large weights: a plain dot product would be huge
    const Trace t = traceOf(*model, kTokens);
    Model& m = *model;
    for (size_t l = 0; l < t.layers.size(); ++l)
      for (size_t h = 0; h < t.layers[l].heads.size(); ++h) {
        const float tau = std::abs(paramNamed(m, "blocks." + std::to_string(l) + ".attn.qk_norm_tau").value(0, h));
        const Mat& S = t.layers[l].heads[h].scores;
        float largest = 0;
        for (int i = 0; i < S.rows(); ++i)
          for (int j = 0; j <= i; ++j) largest = std::max(largest, std::abs(S(i, j)));
        QVERIFY2(largest <= tau * (1 + 1e-5f), qPrintable(QString("layer %1 head %2: |s| %3 > tau %4").arg(l).arg(h).arg(largest).arg(tau)));
        QVERIFY(largest > 0.2f * tau);  // and the bound is not met trivially
      }
  }

  // Scaling W_q by c > 0 scales every q_i by c, which q_i/|q_i| removes: the maps do not change.
  void qkNormIgnoresTheScaleOfWq() {
    const auto model = randomisedModel(smallConfig("qk_norm", "alibi"));
    const Trace before = traceOf(*model, kTokens);
    for (const float scale : {0.01f, 7.0f}) {
      auto scaled = randomisedModel(smallConfig("qk_norm", "alibi"));
      for (int l = 0; l < 2; ++l) paramNamed(*scaled, "blocks." + std::to_string(l) + ".attn.wq.weight").value *= scale;
      const double diff = largestMapDifference(before, traceOf(*scaled, kTokens));
      QVERIFY2(diff < 1e-5, qPrintable(QString("scale %1 changes the maps by %2").arg(scale).arg(diff)));
    }
    // and softmax's maps do change (the check has teeth)
    const auto plain = randomisedModel(smallConfig("softmax", "alibi"));
    auto sharper = randomisedModel(smallConfig("softmax", "alibi"));
    paramNamed(*sharper, "blocks.0.attn.wq.weight").value *= 7.0f;
    QVERIFY(largestMapDifference(traceOf(*plain, kTokens), traceOf(*sharper, kTokens)) > 1e-2);
  }

  // --- Learnable sink --------------------------------------------------------------------------
  // z_h -> -inf: the sink takes no weight and the maps are softmax's, to float rounding.
  void sinkAtMinusInfinityIsSoftmax() {
    const auto softmax = randomisedModel(smallConfig("softmax", "rope"));
    auto sink = randomisedModel(smallConfig("softmax_sink", "rope"));
    copySharedParams(*softmax, *sink);
    for (int l = 0; l < 2; ++l) paramNamed(*sink, "blocks." + std::to_string(l) + ".attn.sink_logit").value.setConstant(-1e30f);
    const double diff = largestMapDifference(traceOf(*softmax, kTokens), traceOf(*sink, kTokens));
    QVERIFY2(diff < 1e-6, qPrintable(QString("maps differ by %1").arg(diff)));
  }

  // With a finite z_h every row keeps 1 - a_sink: exactly exp(z) / (exp(z) + sum_j exp(s_ij)).
  void sinkTakesItsShareOfEachRow() {
    auto model = randomisedModel(smallConfig("softmax_sink", "none"));
    paramNamed(*model, "blocks.0.attn.sink_logit").value.setConstant(1.0f);
    const Trace t = traceOf(*model, kTokens);
    const auto& head = t.layers[0].heads[1];
    for (int i = 0; i < head.weights.rows(); ++i) {
      double denominator = std::exp(1.0);
      for (int j = 0; j <= i; ++j) denominator += std::exp(static_cast<double>(head.scores(i, j)));
      const double mass = head.weights.row(i).cast<double>().sum();
      QVERIFY2(std::abs(mass - (1.0 - std::exp(1.0) / denominator)) < 1e-5, qPrintable(QString("row %1 mass %2").arg(i).arg(mass)));
    }
  }

  // --- L1-augmented score ----------------------------------------------------------------------
  // The scores are q.k/sqrt(d) - lambda |P q - P k|_1 computed here by hand, and lambda -> 0 gives softmax.
  void l1ScoreIsDotMinusL1Distance() {
    ModelConfig config;
    config.n_heads = 2;
    config.d_model = 8;
    config.context = 6;
    config.attention_settings = {{"l1_rank", 3}};
    ParamStore params;
    auto attn = AttentionRegistry::instance().create("l1_score");
    QCOMPARE(attn->configure(config, "x.", params), std::string());
    Rng rng(5);
    attn->initialise(rng);
    params.find("x.l1_log_lambda")->value << 0.3f, -0.5f;
    const AttentionShape s{1, 5, 2, 2, 4};
    const std::vector<float> q = testing::randomVector(s.qSize(), rng, -1, 1), k = testing::randomVector(s.kvSize(), rng, -1, 1),
                             v = testing::randomVector(s.kvSize(), rng, -1, 1);
    std::vector<float> o(s.qSize()), scores(s.mapSize()), weights(s.mapSize());
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    attn->forward(AttentionInputs{s, q.data(), k.data(), v.data(), nullptr, nullptr, nullptr, 0.5f}, out);
    const Mat& P = params.find("x.l1_proj")->value;  // [H, r * d]
    for (int h = 0; h < 2; ++h) {
      const double lambda = std::exp(params.find("x.l1_log_lambda")->value(0, h));
      for (int i = 0; i < s.T; ++i)
        for (int j = 0; j <= i; ++j) {
          double dot = 0, l1 = 0;
          const float* qi = q.data() + (h * s.T + i) * 4;
          const float* kj = k.data() + (h * s.T + j) * 4;
          for (int d = 0; d < 4; ++d) dot += qi[d] * kj[d];
          for (int m = 0; m < 3; ++m) {
            double diff = 0;
            for (int d = 0; d < 4; ++d) diff += P(h, m * 4 + d) * (qi[d] - kj[d]);
            l1 += std::abs(diff);
          }
          QVERIFY(std::abs(scores[(h * s.T + i) * s.T + j] - (0.5 * dot - lambda * l1)) < 1e-5);
        }
    }
    const auto softmax = randomisedModel(smallConfig("softmax", "rope"));
    auto l1 = randomisedModel(smallConfig("l1_score", "rope"));
    copySharedParams(*softmax, *l1);
    for (int l = 0; l < 2; ++l) paramNamed(*l1, "blocks." + std::to_string(l) + ".attn.l1_log_lambda").value.setConstant(-1e30f);
    QVERIFY(largestMapDifference(traceOf(*softmax, kTokens), traceOf(*l1, kTokens)) < 1e-6);
  }

  // --- Deconstructed attention -----------------------------------------------------------------
  // The static map is the same for every input, and row i is softmax(B_{h, i-j}) over j <= i.
  void staticMapIsTheSameForEveryInput() {
    auto model = randomisedModel(smallConfig("static_map", "rope"));
    const Trace a = traceOf(*model, kTokens);
    const Trace b = traceOf(*model, {7, 7, 0, 1, 5, 5, 2, 6, 8, 3, 4, 0});
    QCOMPARE(largestMapDifference(a, b), 0.0);
    const Mat& B = paramNamed(*model, "blocks.1.attn.static_map").value;
    const Mat& A = a.layers[1].heads[3].weights;
    for (int i = 0; i < A.rows(); ++i) {
      double sum = 0;
      for (int j = 0; j <= i; ++j) sum += std::exp(static_cast<double>(B(3, i - j)));
      for (int j = 0; j <= i; ++j) QVERIFY(std::abs(A(i, j) - std::exp(B(3, i - j)) / sum) < 1e-6);
    }
    // and a content-based map does change with the input
    const auto softmax = randomisedModel(smallConfig("softmax", "rope"));
    QVERIFY(largestMapDifference(traceOf(*softmax, kTokens), traceOf(*softmax, {7, 7, 0, 1, 5, 5, 2, 6, 8, 3, 4, 0})) > 1e-3);
  }

  // With no mixing, a_ij = delta_ij and output i does not depend on any other token.
  void noMixingKeepsEachTokenToItself() {
    const auto model = randomisedModel(smallConfig("no_mixing", "rope"));
    const Trace t = traceOf(*model, kTokens);
    for (const auto& layer : t.layers)
      for (const auto& head : layer.heads) QVERIFY(head.weights == Mat::Identity(kTokens.size(), kTokens.size()));
    for (size_t changed = 0; changed < kTokens.size(); ++changed) {
      std::vector<int> other = kTokens;
      other[changed] = (other[changed] + 3) % 9;
      const Trace u = traceOf(*model, other);
      for (size_t i = 0; i < kTokens.size(); ++i) {
        const bool same = t.logits.row(i) == u.logits.row(i);
        QVERIFY2(same == (i != changed), qPrintable(QString("token %1 changed, output %2").arg(changed).arg(i)));
      }
    }
  }

  // --- Gradients and decoding, every new variant -----------------------------------------------
  void gradients_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("positional");
    QTest::addColumn<QString>("settings");
    for (const char* v : kNewVariants)
      for (const char* p : {"rope", "alibi"}) QTest::newRow(qPrintable(QString("%1+%2").arg(v, p))) << v << p << "";
    QTest::newRow("qk_norm GQA") << "qk_norm" << "rope" << "gqa";
    QTest::newRow("softmax_sink GQA temperature") << "softmax_sink" << "alibi" << "gqa,temperature=1.6";
    QTest::newRow("l1_score GQA rank 2") << "l1_score" << "rope" << "gqa,l1_rank=2";
    QTest::newRow("static_map GQA") << "static_map" << "none" << "gqa";
  }
  void gradients() {
    QFETCH(QString, variant);
    QFETCH(QString, positional);
    QFETCH(QString, settings);
    ModelConfig c = gradConfig(variant.toStdString(), positional.toStdString());
    for (const QString& kv : settings.split(',', Qt::SkipEmptyParts)) {
      if (kv == "gqa") {
        c.n_heads = 4;
        c.n_kv_heads = 2;
        c.d_model = 16;
      } else {
        c.attention_settings[kv.section('=', 0, 0).toStdString()] = kv.section('=', 1, 1).toDouble();
      }
    }
    Model model(c, 7);
    testing::randomiseParams(model, 11);
    // the content-free variants read neither queries nor keys: W_q and W_k must get no gradient
    const bool contentFree = isContentFree(variant.toStdString());
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), QTest::currentDataTag(), 1e-2, 40, [&](const std::string& name) {
      return contentFree && (name.find(".wq.") != std::string::npos || name.find(".wk.") != std::string::npos);
    });
  }

  // The key-gate hook: d_key_gate (and d_q, d_k, d_v where the variant reads them) match differences.
  void keyGateGradients_data() {
    QTest::addColumn<QString>("variant");
    for (const char* v : {"qk_norm", "softmax_sink", "l1_score", "static_map"}) QTest::newRow(v) << v;
  }
  void keyGateGradients() {
    QFETCH(QString, variant);
    ModelConfig config;
    config.n_heads = 4;
    config.d_model = 12;
    config.context = 8;
    ParamStore params;
    auto attn = AttentionRegistry::instance().create(variant.toStdString());
    QCOMPARE(attn->configure(config, "blocks.0.attn.", params), std::string());
    Rng rng(21);
    attn->initialise(rng);
    for (auto& p : params.all())
      for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, 0.3f);
    const AttentionShape s{2, 6, 4, 2, 3};
    std::vector<float> q = testing::randomVector(s.qSize(), rng, -1.5f, 1.5f), k = testing::randomVector(s.kvSize(), rng, -1.5f, 1.5f),
                       v = testing::randomVector(s.kvSize(), rng, -1, 1), gate = testing::randomVector(static_cast<size_t>(s.B) * s.H * s.T, rng, 0.2f, 1),
                       R = testing::randomVector(s.qSize(), rng, -1, 1);
    std::vector<float> o(s.qSize()), scores(s.mapSize()), weights(s.mapSize());
    auto inputs = [&] { return AttentionInputs{s, q.data(), k.data(), v.data(), nullptr, nullptr, gate.data(), 0.577f}; };
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    auto loss = [&] {
      attn->forward(inputs(), out);
      double l = 0;
      for (size_t i = 0; i < o.size(); ++i) l += static_cast<double>(o[i]) * R[i];
      return l;
    };
    loss();
    std::vector<float> dQ(s.qSize()), dK(s.kvSize()), dV(s.kvSize()), dGate(gate.size());
    AttentionGrads grads{R.data(), dQ.data(), dK.data(), dV.data(), dGate.data()};
    attn->backward(inputs(), out, grads);
    const std::pair<std::vector<float>*, const std::vector<float>*> checks[] = {{&gate, &dGate}, {&q, &dQ}, {&k, &dK}, {&v, &dV}};
    const char* names[] = {"key_gate", "q", "k", "v"};
    for (int c = 0; c < 4; ++c) {
      if (isContentFree(variant.toStdString()) && (c == 1 || c == 2)) {
        QVERIFY(std::all_of(checks[c].second->begin(), checks[c].second->end(), [](float x) { return x == 0.0f; }));
        continue;
      }
      const double rel = testing::relativeError(*checks[c].first, *checks[c].second, loss);
      QVERIFY2(rel < 1e-2, qPrintable(QString("%1: d_%2 relative error %3").arg(variant, names[c]).arg(rel)));
    }
  }

  // Decoding through the KV cache with nothing evicted equals the full forward.
  void decodeEqualsForward_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("positional");
    for (const char* v : kNewVariants)
      for (const char* p : {"none", "rope", "alibi", "learned", "accumulated_rotation"}) QTest::newRow(qPrintable(QString("%1/%2").arg(v, p))) << v << p;
  }
  void decodeEqualsForward() {
    QFETCH(QString, variant);
    QFETCH(QString, positional);
    ModelConfig c = smallConfig(variant.toStdString(), positional.toStdString(), 9, 16);
    c.n_kv_heads = 2;
    c.retention_gate = true;
    const auto model = randomisedModel(c);
    const Trace full = traceOf(*model, kTokens);
    Decoder decoder(*model, makeEvictionPolicy("full", {}, model->config()), "full", Budget{});
    double worst = 0;
    for (size_t t = 0; t < kTokens.size(); ++t)
      worst = std::max(worst, static_cast<double>((decoder.step(kTokens[t]) - full.logits.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
    QVERIFY2(worst < 2e-5 * std::max(1.0f, full.logits.cwiseAbs().maxCoeff()), qPrintable(QString("decode differs by %1").arg(worst)));
  }
};

QTEST_APPLESS_MAIN(TestMechanismVariants)
#include "test_mechanism_variants.moc"
