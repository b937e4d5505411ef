// DeltaNet and gated DeltaNet (engine/attention/deltanet_core.h): finite-difference gradients of
// every parameter (the gates' own included, at non-default values), the parallel form against the
// recurrent one step by step, the delta rule's exact contract (beta = 1 stores v_t under k_t), the
// map the views draw (O = A V, lower triangular) and causality.
#include <QtTest>

#include <omp.h>

#include <cmath>

#include "attention/attention.h"
#include "grad_check.h"
#include "model/model.h"

using namespace attnlab;

namespace {
using testing::randomVector;

ModelConfig tiny(const std::string& variant) { return testing::gradCheckConfig(variant, "none"); }

// A variant with its parameters drawn at random (gate biases far from their initial values).
struct Direct {
  std::unique_ptr<AttentionVariant> attn;
  ParamStore params;
  Direct(const std::string& name, int H, int dHead, uint64_t seed) {
    ModelConfig c;
    c.n_heads = H;
    c.d_model = H * dHead;
    attn = AttentionRegistry::instance().create(name);
    QVERIFY(attn);
    QCOMPARE(attn->configure(c, "blocks.0.attn.", params), std::string());
    Rng rng(seed);
    attn->initialise(rng);
    for (auto& p : params.all())
      for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += static_cast<float>(rng.uniform() * 1.6 - 0.8);
  }
  Param& param(const std::string& suffix) { return *params.find("blocks.0.attn." + suffix); }
};

struct Run {
  AttentionShape s;
  std::vector<float> q, k, v, gate, o, scores, weights;
  Run(AttentionShape shape, uint64_t seed, bool withGate) : s(shape) {
    Rng rng(seed);
    q = randomVector(s.qSize(), rng, -1, 1);
    k = randomVector(s.kvSize(), rng, -1, 1);
    v = randomVector(s.kvSize(), rng, -1, 1);
    if (withGate) gate = randomVector(static_cast<size_t>(s.B) * s.H * s.T, rng, 0.2f, 1);
    o.resize(s.qSize());
    scores.resize(s.mapSize());
    weights.resize(s.mapSize());
  }
  AttentionInputs inputs() const {
    return AttentionInputs{s, q.data(), k.data(), v.data(), nullptr, nullptr, gate.empty() ? nullptr : gate.data(), 0.5f};
  }
  void forward(const AttentionVariant& a) {
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    a.forward(inputs(), out);
  }
};
}  // namespace

class TestDeltaNet : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  // Every parameter of a small model, plain and gated, with grouped K/V heads and with the retention
  // gate as key gate (beta_t = sigmoid(.) g_t).
  void modelGradients_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<QString>("option");
    for (const char* v : {"deltanet", "gated_deltanet"})
      for (const char* opt : {"", "gqa", "retention", "learned"}) QTest::newRow((std::string(v) + " " + opt).c_str()) << v << opt;
  }
  void modelGradients() {
    QFETCH(QString, variant);
    QFETCH(QString, option);
    ModelConfig c = tiny(variant.toStdString());
    if (option == "gqa") c.n_heads = 4, c.n_kv_heads = 2;
    if (option == "retention") c.retention_gate = true;
    if (option == "learned") c.positional = "learned", c.attention = {variant.toStdString(), "softmax"};
    Model model(c, 7);
    testing::randomiseParams(model, 11);
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), QTest::currentDataTag());
  }

  // The key-gate gradient and d_q, d_k, d_v of the variant itself against L = sum(o * R).
  void directGradients_data() {
    QTest::addColumn<QString>("variant");
    QTest::newRow("deltanet") << "deltanet";
    QTest::newRow("gated_deltanet") << "gated_deltanet";
  }
  void directGradients() {
    QFETCH(QString, variant);
    Direct d(variant.toStdString(), 4, 3, 5);
    Run r({2, 6, 4, 2, 3}, 9, true);
    Rng rng(3);
    const std::vector<float> R = randomVector(r.s.qSize(), rng, -1, 1);
    auto loss = [&] {
      r.forward(*d.attn);
      double sum = 0;
      for (size_t i = 0; i < R.size(); ++i) sum += static_cast<double>(r.o[i]) * R[i];
      return sum;
    };
    loss();
    std::vector<float> dq(r.s.qSize()), dk(r.s.kvSize()), dv(r.s.kvSize()), dGate(r.gate.size());
    AttentionOutputs saved{r.o.data(), r.scores.data(), r.weights.data()};
    AttentionGrads g{R.data(), dq.data(), dk.data(), dv.data(), dGate.data()};
    d.attn->backward(r.inputs(), saved, g);
    QVERIFY(testing::relativeError(r.q, dq, loss) < 1e-2);
    QVERIFY(testing::relativeError(r.k, dk, loss) < 1e-2);
    QVERIFY(testing::relativeError(r.v, dv, loss) < 1e-2);
    QVERIFY(testing::relativeError(r.gate, dGate, loss) < 1e-2);
  }

  // The recurrent form (what the decoder steps) gives every row of the parallel form.
  void recurrentEqualsParallel_data() { directGradients_data(); }
  void recurrentEqualsParallel() {
    QFETCH(QString, variant);
    Direct d(variant.toStdString(), 4, 5, 7);
    Run r({2, 10, 4, 2, 5}, 13, true);
    r.forward(*d.attn);
    double worst = 0;
    for (int b = 0; b < r.s.B; ++b)
      for (int h = 0; h < r.s.H; ++h) {
        auto state = d.attn->recurrentState(h, r.s.dHead);
        QVERIFY(state);
        std::vector<float> o(r.s.dHead);
        for (int t = 0; t < r.s.T; ++t) {
          const size_t qRow = ((static_cast<size_t>(b) * r.s.H + h) * r.s.T + t) * r.s.dHead;
          const size_t kRow = ((static_cast<size_t>(b) * r.s.Hkv + h / r.s.group()) * r.s.T + t) * r.s.dHead;
          state->step(&r.q[qRow], &r.k[kRow], &r.v[kRow], o.data(), r.gate[(static_cast<size_t>(b) * r.s.H + h) * r.s.T + t]);
          for (int c = 0; c < r.s.dHead; ++c) worst = std::max(worst, std::abs(static_cast<double>(o[c] - r.o[qRow + c])));
        }
        QCOMPARE(state->bytes(), sizeof(float) * r.s.dHead * r.s.dHead);  // constant size: d_head^2 floats
      }
    QVERIFY2(worst < 1e-5, qPrintable(QString("largest difference %1").arg(worst)));
  }

  // With beta = 1 (gate bias 50, sigmoid(50) is 1 in float) plain DeltaNet overwrites: S_t k^_t = v_t,
  // so reading with q = k^_t returns v_t exactly, whatever was stored before.
  void betaOneStoresTheValue() {
    Direct d("deltanet", 1, 4, 3);
    d.param("delta_beta_b").value.setConstant(50.0f);
    d.param("delta_beta_w").value.setZero();
    auto state = d.attn->recurrentState(0, 4);
    Rng rng(17);
    std::vector<float> o(4);
    for (int t = 0; t < 6; ++t) {
      const std::vector<float> k = randomVector(4, rng, -2, 2), v = randomVector(4, rng, -1, 1);
      float norm = 0;
      for (float x : k) norm += x * x;
      std::vector<float> unit(4);
      for (int c = 0; c < 4; ++c) unit[c] = k[c] / std::sqrt(norm);
      state->step(unit.data(), k.data(), v.data(), o.data(), 1.0f);
      for (int c = 0; c < 4; ++c) QVERIFY2(std::abs(o[c] - v[c]) < 1e-5f, qPrintable(QString("t=%1 c=%2").arg(t).arg(c)));
    }
  }

  // The drawn map is the output's: O = A V with A lower triangular, the scores -inf above the diagonal;
  // and changing a later token changes no earlier output.
  void mapAndCausality_data() { directGradients_data(); }
  void mapAndCausality() {
    QFETCH(QString, variant);
    Direct d(variant.toStdString(), 2, 3, 11);
    Run r({1, 7, 2, 2, 3}, 4, false);
    r.forward(*d.attn);
    const int T = r.s.T, dh = r.s.dHead;
    for (int h = 0; h < r.s.H; ++h) {
      const Eigen::Map<const Mat> A(r.weights.data() + static_cast<size_t>(h) * T * T, T, T);
      const Eigen::Map<const Mat> V(r.v.data() + static_cast<size_t>(h) * T * dh, T, dh);
      const Eigen::Map<const Mat> O(r.o.data() + static_cast<size_t>(h) * T * dh, T, dh);
      QVERIFY((O - A * V).cwiseAbs().maxCoeff() < 1e-5f);
      for (int i = 0; i < T; ++i)
        for (int j = i + 1; j < T; ++j) {
          QCOMPARE(A(i, j), 0.0f);
          QVERIFY(std::isinf(r.scores[(static_cast<size_t>(h) * T + i) * T + j]));
        }
    }
    const std::vector<float> before = r.o;
    for (int h = 0; h < r.s.H; ++h)
      for (int c = 0; c < dh; ++c) {  // the last token's key and value
        r.k[(static_cast<size_t>(h) * T + T - 1) * dh + c] += 0.7f;
        r.v[(static_cast<size_t>(h) * T + T - 1) * dh + c] -= 0.4f;
      }
    r.forward(*d.attn);
    for (int h = 0; h < r.s.H; ++h)
      for (int t = 0; t + 1 < T; ++t)
        for (int c = 0; c < dh; ++c) {
          const size_t i = (static_cast<size_t>(h) * T + t) * dh + c;
          QCOMPARE(r.o[i], before[i]);
        }
  }

  // Gated with alpha -> 0 (bias -50) forgets everything before: o_t = beta_t (k^_t . q_t) v_t.
  void gateClosedForgets() {
    Direct d("gated_deltanet", 1, 3, 2);
    d.param("delta_alpha_b").value.setConstant(-50.0f);
    d.param("delta_alpha_w").value.setZero();
    Run r({1, 5, 1, 1, 3}, 8, false);
    r.forward(*d.attn);
    const float* w = d.param("delta_beta_w").value.data();
    const float c = d.param("delta_beta_b").value(0, 0);
    for (int t = 0; t < 5; ++t) {
      const float* k = &r.k[t * 3];
      const float* q = &r.q[t * 3];
      const float norm = std::sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
      const float beta = 1.0f / (1.0f + std::exp(-(c + w[0] * k[0] + w[1] * k[1] + w[2] * k[2])));
      const float kq = (k[0] * q[0] + k[1] * q[1] + k[2] * q[2]) / norm;
      for (int i = 0; i < 3; ++i) QVERIFY(std::abs(r.o[t * 3 + i] - beta * kq * r.v[t * 3 + i]) < 1e-5f);
    }
  }
};

QTEST_MAIN(TestDeltaNet)
#include "test_deltanet.moc"
