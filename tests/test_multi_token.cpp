// Multi-token attention (engine/attention/multi_token.cpp): finite-difference gradients of every
// parameter (the kernel included, at non-default widths), the identity kernel is softmax, the
// convolution against the formula computed directly, causality, and decoding refused in one line.
#include <QtTest>

#include <omp.h>

#include <cmath>

#include "attention/attention.h"
#include "grad_check.h"
#include "kv/decoder.h"
#include "model/model.h"

using namespace attnlab;

namespace {
using testing::randomVector;

ModelConfig tiny(const std::string& positional) { return testing::gradCheckConfig("multi_token", positional); }

struct Direct {
  std::unique_ptr<AttentionVariant> attn;
  ParamStore params;
  Direct(const std::string& name, const Settings& settings, int H) {
    ModelConfig c;
    c.n_heads = H;
    c.d_model = H * 3;
    c.attention_settings = settings;
    attn = AttentionRegistry::instance().create(name);
    QVERIFY(attn);
    QCOMPARE(attn->configure(c, "blocks.0.attn.", params), std::string());
    Rng rng(1);
    attn->initialise(rng);
  }
};

// forward of `a` on random q, k, v of shape s: the outputs and weights
void run(const AttentionVariant& a, const AttentionShape& s, uint64_t seed, std::vector<float>& o, std::vector<float>& w,
         std::vector<float>* kOut = nullptr, int changeLastToken = 0) {
  Rng rng(seed);
  std::vector<float> q = randomVector(s.qSize(), rng, -1, 1), k = randomVector(s.kvSize(), rng, -1, 1),
                     v = randomVector(s.kvSize(), rng, -1, 1), scores(s.mapSize());
  if (changeLastToken)
    for (int h = 0; h < s.Hkv; ++h)
      for (int c = 0; c < s.dHead; ++c) k[(static_cast<size_t>(h) * s.T + s.T - 1) * s.dHead + c] += 0.9f, q[(static_cast<size_t>(h) * s.T + s.T - 1) * s.dHead + c] -= 0.5f;
  if (kOut) *kOut = k;
  o.assign(s.qSize(), 0);
  w.assign(s.mapSize(), 0);
  AttentionInputs in{s, q.data(), k.data(), v.data(), nullptr, nullptr, nullptr, 0.5f};
  AttentionOutputs out{o.data(), scores.data(), w.data()};
  a.forward(in, out);
}
}  // namespace

class TestMultiToken : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  void modelGradients_data() {
    QTest::addColumn<QString>("positional");
    QTest::addColumn<QString>("option");
    for (const char* p : {"rope", "alibi", "none"})
      for (const char* opt : {"", "widths", "gqa", "retention"}) QTest::newRow((std::string(p) + " " + opt).c_str()) << p << opt;
  }
  void modelGradients() {
    QFETCH(QString, positional);
    QFETCH(QString, option);
    ModelConfig c = tiny(positional.toStdString());
    if (option == "widths") c.attention_settings = {{"mta_query_width", 2}, {"mta_key_width", 4}, {"temperature", 1.4}};
    if (option == "gqa") c.n_heads = 4, c.n_kv_heads = 2;
    if (option == "retention") c.retention_gate = true;
    Model model(c, 7);
    testing::randomiseParams(model, 11);
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), QTest::currentDataTag());
  }

  // The identity kernel (the initial one) gives softmax's outputs and weights.
  void identityKernelIsSoftmax() {
    Direct mta("multi_token", {}, 2), softmax("softmax", {}, 2);
    const AttentionShape s{1, 7, 2, 2, 3};
    std::vector<float> o1, w1, o2, w2;
    run(*mta.attn, s, 5, o1, w1);
    run(*softmax.attn, s, 5, o2, w2);
    for (size_t i = 0; i < o1.size(); ++i) QVERIFY(std::abs(o1[i] - o2[i]) < 1e-6f);
    for (size_t i = 0; i < w1.size(); ++i) QVERIFY(std::abs(w1[i] - w2[i]) < 1e-6f);
  }

  // A hand kernel against the formula: s~_ij = sum theta_ab s0_{i-a, j-b}, then softmax.
  void convolutionMatchesTheFormula() {
    Direct mta("multi_token", {{"mta_query_width", 2}, {"mta_key_width", 2}}, 1);
    Param& theta = *mta.params.find("blocks.0.attn.mta_kernel");
    theta.value << 0.5f, -0.3f, 0.8f, 0.2f;  // theta_00, theta_01, theta_10, theta_11
    const AttentionShape s{1, 5, 1, 1, 3};
    std::vector<float> o, w, k;
    run(*mta.attn, s, 9, o, w, &k);
    Rng rng(9);
    const std::vector<float> q = randomVector(s.qSize(), rng, -1, 1);
    auto s0 = [&](int i, int j) {
      if (i < 0 || j < 0 || j > i) return 0.0f;
      float dot = 0;
      for (int c = 0; c < 3; ++c) dot += q[i * 3 + c] * k[j * 3 + c];
      return 0.5f * dot;
    };
    for (int i = 0; i < 5; ++i) {
      std::vector<double> z(i + 1);
      double sum = 0, top = -1e30;
      for (int j = 0; j <= i; ++j) {
        z[j] = 0.5 * s0(i, j) - 0.3 * s0(i, j - 1) + 0.8 * s0(i - 1, j) + 0.2 * s0(i - 1, j - 1);
        top = std::max(top, z[j]);
      }
      for (int j = 0; j <= i; ++j) sum += std::exp(z[j] - top);
      for (int j = 0; j <= i; ++j) QVERIFY(std::abs(w[i * 5 + j] - std::exp(z[j] - top) / sum) < 1e-5);
    }
  }

  // Changing the last token's query and key changes no earlier output, for any kernel.
  void laterTokensNeverChangeEarlierOutputs() {
    Direct mta("multi_token", {{"mta_query_width", 3}, {"mta_key_width", 3}}, 2);
    Rng rng(4);
    Param& theta = *mta.params.find("blocks.0.attn.mta_kernel");
    for (Eigen::Index i = 0; i < theta.value.size(); ++i) theta.value.data()[i] = static_cast<float>(rng.uniform() * 2 - 1);
    const AttentionShape s{1, 8, 2, 2, 3};
    std::vector<float> before, after, w;
    run(*mta.attn, s, 6, before, w);
    run(*mta.attn, s, 6, after, w, nullptr, 1);
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t + 1 < s.T; ++t)
        for (int c = 0; c < 3; ++c) {
          const size_t i = (static_cast<size_t>(h) * s.T + t) * 3 + c;
          QCOMPARE(after[i], before[i]);
        }
  }

  void decodingIsRefusedInOneLine() {
    const ModelConfig c = tiny("rope");
    Model model(c, 7);
    try {
      Decoder decoder(model, makeEvictionPolicy("full", {}, c), "full", Budget{});
      QFAIL("expected a refusal");
    } catch (const std::invalid_argument& e) {
      QVERIFY(QString(e.what()).contains("'multi_token'"));
      QVERIFY(QString(e.what()).contains("cannot decode"));
    }
  }
};

QTEST_MAIN(TestMultiToken)
#include "test_multi_token.moc"
