// Finite-difference checks for the sigmoid, linear, sliding-window and momentum variants: every
// parameter tensor of a small model with a rotary and a bias-based encoding each (linear: encodings
// without a score bias, which it ignores), hybrids of different variants per layer; and for every
// registered variant, grouped KV heads and the key-gate hook called on the variant directly.
#include <QtTest>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "attention/attention.h"
#include "attention/content_free.h"
#include "grad_check.h"
#include "model/model.h"

using namespace attnlab;

namespace {
using testing::randomVector;
using testing::relativeError;
ModelConfig small(std::vector<std::string> attention, const std::string& positional) {
  ModelConfig c = testing::gradCheckConfig("softmax", positional);
  c.attention = std::move(attention);
  return c;
}

void run(const ModelConfig& c, const std::string& label) {
  Model model(c, 7);
  testing::randomiseParams(model, 11);
  testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), label);
}
}  // namespace

class TestVariantGradients : public QObject {
  Q_OBJECT

 private slots:
  // One thread: these cases are tiny, and OpenMP's spinning threads slow them down by orders of
  // magnitude when other jobs share the cores.
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  void eachVariantWithEachEncoding_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("positional");
    QTest::addColumn<QString>("settings");
    const char* cases[][3] = {
        {"sigmoid", "rope", ""},
        {"sigmoid", "alibi", "temperature=1.7"},
        {"sigmoid", "rope", "sigmoid_bias_learned=1"},
        {"sigmoid", "alibi_log", "sigmoid_bias_learned=1"},
        {"linear", "none", ""},
        {"linear", "learned", ""},
        {"linear", "sinusoidal", ""},
        {"window", "rope", "window=3"},
        {"window", "alibi", "window=2,temperature=0.6"},
        {"momentum", "rope", ""},
        {"momentum", "alibi", "momentum_gamma=-0.7,temperature=1.5"},
        {"momentum", "learned", "momentum_gamma=3"},
    };
    for (const auto& c : cases)
      QTest::newRow((std::string(c[0]) + "+" + c[1] + (*c[2] ? " " : "") + c[2]).c_str()) << c[0] << c[1] << c[2];
  }
  void eachVariantWithEachEncoding() {
    QFETCH(QString, variant);
    QFETCH(QString, positional);
    QFETCH(QString, settings);
    ModelConfig c = small({variant.toStdString()}, positional.toStdString());
    for (const QString& kv : settings.split(',', Qt::SkipEmptyParts))
      c.attention_settings[kv.section('=', 0, 0).toStdString()] = kv.section('=', 1, 1).toDouble();
    run(c, QTest::currentDataTag());
  }

  // Grouped KV heads: gradients of query heads sharing a K/V head (and a learned bias per query head) add up.
  void groupedKeyValueHeads_data() {
    QTest::addColumn<QString>("variant");
    QVERIFY(!AttentionRegistry::instance().entries().empty());
    for (const auto& e : AttentionRegistry::instance().entries()) QTest::newRow(e.name.c_str()) << QString::fromStdString(e.name);
  }
  // Variants without dot scores ignore a score bias: they get an absolute encoding instead.
  void groupedKeyValueHeads() {
    QFETCH(QString, variant);
    ModelConfig c = small({variant.toStdString()}, AttentionRegistry::instance().create(variant.toStdString())->usesDotScores() ? "alibi" : "learned");
    c.n_heads = 4;
    c.n_kv_heads = 2;
    // d_head 4 and a rank-2 L1 subspace, as the L1 score's own suite: with fewer dimensions its
    // |P q - P k| terms sit within a finite difference of their kinks
    c.d_model = 16;
    c.attention_settings = {{"sigmoid_bias_learned", 1}, {"window", 4}, {"l1_rank", 2}};
    Model model(c, 7);
    testing::randomiseParams(model, 11);
    const bool contentFree = isContentFree(variant.toStdString());
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), variant.toStdString() + " GQA-2", 1e-2, 40, [&](const std::string& name) {
      return contentFree && (name.find(".wq.") != std::string::npos || name.find(".wk.") != std::string::npos);
    });
  }

  void hybrids_data() {
    QTest::addColumn<QString>("layers");
    QTest::addColumn<QString>("positional");
    QTest::newRow("softmax,sigmoid+rope") << "softmax,sigmoid" << "rope";
    QTest::newRow("softmax,sigmoid+alibi") << "softmax,sigmoid" << "alibi";
    QTest::newRow("linear,window+rope") << "linear,window" << "rope";  // rotation only in the window layer
    QTest::newRow("linear,window+alibi") << "linear,window" << "alibi";
    QTest::newRow("momentum,linear+learned") << "momentum,linear" << "learned";
  }
  void hybrids() {
    QFETCH(QString, layers);
    QFETCH(QString, positional);
    std::vector<std::string> names;
    for (const QString& n : layers.split(',')) names.push_back(n.toStdString());
    ModelConfig c = small(names, positional.toStdString());
    c.attention_settings = {{"window", 3}, {"sigmoid_bias_learned", 1}};
    run(c, QTest::currentDataTag());
  }

  // The key-gate hook (retention gate, presence) on each variant called directly: d_key_gate, d_q, d_k, d_v all match
  // finite differences of L = sum(o * R).
  void keyGateGradients_data() {
    QTest::addColumn<QString>("variant");
    QVERIFY(!AttentionRegistry::instance().entries().empty());
    for (const auto& e : AttentionRegistry::instance().entries()) QTest::newRow(e.name.c_str()) << QString::fromStdString(e.name);
  }
  void keyGateGradients() {
    QFETCH(QString, variant);
    ModelConfig config;
    config.n_heads = 4;
    config.d_model = 12;  // d_head 3, as the shape below: variants with per-head projections (L1 score) size them from it
    config.context = 8;
    config.attention_settings = {{"window", 3}, {"temperature", 1.3}};
    ParamStore params;
    auto attn = AttentionRegistry::instance().create(variant.toStdString());
    QVERIFY(attn);
    QCOMPARE(attn->configure(config, "blocks.0.attn.", params), std::string());
    Rng rng(21);
    attn->initialise(rng);

    AttentionShape s{2, 6, 4, 2, 3};  // B, T, H, Hkv, d_head: grouped, so shared K/V heads are covered
    std::vector<float> q = randomVector(s.qSize(), rng, -1.5f, 1.5f), k = randomVector(s.kvSize(), rng, -1.5f, 1.5f),
                       v = randomVector(s.kvSize(), rng, -1, 1), gate = randomVector(static_cast<size_t>(s.B) * s.H * s.T, rng, 0.2f, 1),
                       R = randomVector(s.qSize(), rng, -1, 1);
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
    // An input the variant ignores (content-free variants: q and k; no mixing: the key gate too)
    // gets exactly zero gradient, and nudging it leaves the loss exactly as it was.
    auto lossIgnores = [&](std::vector<float>& x) {
      const double before = loss();
      for (float& xi : x) {
        const float saved = xi;
        xi += 1e-2f;
        const double after = loss();
        xi = saved;
        if (after != before) return false;
      }
      return true;
    };
    for (int c = 0; c < 4; ++c) {
      const bool unread = isContentFree(variant.toStdString()) && (c == 1 || c == 2);
      const bool zero = std::all_of(checks[c].second->begin(), checks[c].second->end(), [](float d) { return d == 0.0f; });
      if (unread || zero) {
        QVERIFY2(zero && lossIgnores(*checks[c].first), qPrintable(QString("%1: d_%2 must be zero exactly when the loss ignores %2").arg(variant, names[c])));
        continue;
      }
      const double rel = relativeError(*checks[c].first, *checks[c].second, loss);
      QVERIFY2(rel < 1e-2, qPrintable(QString("%1: d_%2 relative error %3").arg(variant, names[c]).arg(rel)));
    }
  }
};

QTEST_APPLESS_MAIN(TestVariantGradients)
#include "test_variant_gradients.moc"
