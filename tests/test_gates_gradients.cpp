// Finite-difference checks of every parameter tensor for the layer mechanisms: projection sharing
// (each mode, with and without grouped KV heads), the output gate (element-wise, head-wise), the
// value gate, the retention gate with its sparsity loss, OAttention (presence from the block
// input) and hybrids of OAttention with softmax. Each with a rotary and a bias-based encoding.
#include <QtTest>

#include <cmath>
#include <functional>

#include "attention/attention.h"
#include "grad_check.h"
#include "model/model.h"

using namespace attnlab;

namespace {
using testing::randomVector;
using testing::relativeError;
ModelConfig small(const std::string& positional) {
  ModelConfig c = testing::gradCheckConfig("softmax", positional);
  // tau near the carriers' squared norms, so that presence varies and its gradient is not negligible
  c.attention_settings["presence_tau"] = 1.0;
  return c;
}

void run(const ModelConfig& c, const std::string& label) {
  Model model(c, 7);
  testing::randomiseParams(model, 11);
  testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), label + " +" + c.positional);
}

void addPositionalColumn() {
  QTest::addColumn<QString>("positional");
}
}  // namespace

class TestGatesGradients : public QObject {
  Q_OBJECT

 private slots:
  void projectionSharing_data() {
    QTest::addColumn<QString>("sharing");
    QTest::addColumn<int>("kvHeads");
    addPositionalColumn();
    for (const char* sharing : {"qkv", "q_k=v", "q=k_v", "q=k=v"})
      for (int kvHeads : {0, 2, 1})  // no grouping, GQA-2, MQA (of 4 heads)
        for (const char* positional : {"rope", "alibi"})
          QTest::newRow(qPrintable(QString("%1 kv%2 %3").arg(sharing).arg(kvHeads).arg(positional)))
              << sharing << kvHeads << positional;
  }
  void projectionSharing() {
    QFETCH(QString, sharing);
    QFETCH(int, kvHeads);
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.n_heads = 4;
    c.n_kv_heads = kvHeads;
    c.d_model = 16;  // d_head 4
    c.projection_sharing = sharing.toStdString();
    run(c, "softmax " + c.projection_sharing + " kv" + std::to_string(kvHeads));
  }

  void outputGate_data() {
    QTest::addColumn<QString>("kind");
    addPositionalColumn();
    for (const char* kind : {"elementwise", "headwise"})
      for (const char* positional : {"rope", "alibi"}) QTest::newRow(qPrintable(QString("%1 %2").arg(kind, positional))) << kind << positional;
  }
  void outputGate() {
    QFETCH(QString, kind);
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.output_gate = kind.toStdString();
    run(c, "softmax, output gate " + c.output_gate);
  }

  void valueGate_data() {
    addPositionalColumn();
    for (const char* positional : {"rope", "alibi"}) QTest::newRow(positional) << positional;
  }
  void valueGate() {
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.value_gate = true;
    run(c, "softmax, value gate");
    c.projection_sharing = "q_k=v";  // the gate on values that are the keys' projection
    run(c, "softmax q_k=v, value gate");
  }

  void retentionGateWithSparsity_data() {
    QTest::addColumn<QString>("variant");
    addPositionalColumn();
    for (const char* variant : {"softmax", "oattention"})
      for (const char* positional : {"rope", "alibi"})
        QTest::newRow(qPrintable(QString("%1 %2").arg(variant, positional))) << variant << positional;
  }
  void retentionGateWithSparsity() {
    QFETCH(QString, variant);
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.attention = {variant.toStdString()};
    c.retention_gate = true;
    c.retention_sparsity = 4.0;
    run(c, variant.toStdString() + ", retention gate (lambda 4)");
  }

  void oattention_data() {
    addPositionalColumn();
    for (const char* positional : {"rope", "alibi", "learned"}) QTest::newRow(positional) << positional;
  }
  void oattention() {
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.attention = {"oattention"};
    run(c, "oattention");
    c.attention_settings["temperature"] = 1.7;
    run(c, "oattention (beta 1.7)");
    c.attention_only = true;  // the residual stream reaches every block's presence directly
    run(c, "oattention attention-only");
  }

  // OAttention called directly with presences as its key gate, some exactly 0 (absent sources):
  // d_key_gate (incl. at p = 0, from the row normaliser), d_q, d_k, d_v match finite differences of
  // L = sum(o * R), and an absent source's gradient is finite.
  void oattentionPresenceGradient() {
    ModelConfig config;
    config.attention_settings = {{"temperature", 1.3}};
    ParamStore params;
    auto attn = AttentionRegistry::instance().create("oattention");
    QVERIFY(attn && attn->needsPresence());
    QCOMPARE(attn->configure(config, "blocks.0.attn.", params), std::string());
    Rng rng(5);
    const AttentionShape s{2, 6, 4, 2, 3};  // B, T, H, Hkv, d_head
    std::vector<float> q = randomVector(s.qSize(), rng, -1.5f, 1.5f), k = randomVector(s.kvSize(), rng, -1.5f, 1.5f),
                       v = randomVector(s.kvSize(), rng, -1, 1), p = randomVector(static_cast<size_t>(s.B) * s.H * s.T, rng, 0.1f, 1),
                       R = randomVector(s.qSize(), rng, -1, 1);
    for (int bh = 0; bh < s.B * s.H; ++bh) p[bh * s.T + 2] = p[bh * s.T + 4] = 0.0f;  // absent sources 2 and 4
    std::vector<float> o(s.qSize()), scores(s.mapSize()), weights(s.mapSize());
    auto inputs = [&] { return AttentionInputs{s, q.data(), k.data(), v.data(), nullptr, nullptr, p.data(), 0.577f}; };
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    auto loss = [&] {
      attn->forward(inputs(), out);
      double l = 0;
      for (size_t i = 0; i < o.size(); ++i) l += static_cast<double>(o[i]) * R[i];
      return l;
    };
    loss();
    for (int bh = 0; bh < s.B * s.H; ++bh)
      for (int i = 0; i < s.T; ++i) QCOMPARE(weights[(bh * s.T + i) * s.T + 2], 0.0f);  // absent: weight exactly 0
    std::vector<float> dQ(s.qSize()), dK(s.kvSize()), dV(s.kvSize()), dP(p.size());
    AttentionGrads grads{R.data(), dQ.data(), dK.data(), dV.data(), dP.data()};
    attn->backward(inputs(), out, grads);
    for (float g : dP) QVERIFY(std::isfinite(g));

    const std::pair<std::vector<float>*, const std::vector<float>*> checks[] = {{&p, &dP}, {&q, &dQ}, {&k, &dK}, {&v, &dV}};
    const char* names[] = {"key_gate", "q", "k", "v"};
    for (int c = 0; c < 4; ++c) {
      const double rel = relativeError(*checks[c].first, *checks[c].second, loss, c == 0);
      QVERIFY2(rel < 1e-2, qPrintable(QString("oattention: d_%1 relative error %2").arg(names[c]).arg(rel)));
    }
  }

  void hybridOAttentionAndSoftmax_data() {
    addPositionalColumn();
    for (const char* positional : {"rope", "alibi"}) QTest::newRow(positional) << positional;
  }
  void hybridOAttentionAndSoftmax() {
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.attention = {"oattention", "softmax"};
    run(c, "hybrid oattention/softmax");
    c.attention = {"softmax", "oattention"};
    run(c, "hybrid softmax/oattention");
  }

  // Every mechanism at once: sharing with GQA, both key gates, value and output gates.
  void everythingTogether_data() {
    addPositionalColumn();
    for (const char* positional : {"rope", "alibi"}) QTest::newRow(positional) << positional;
  }
  void everythingTogether() {
    QFETCH(QString, positional);
    ModelConfig c = small(positional.toStdString());
    c.d_model = 16;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.attention = {"oattention", "softmax"};
    c.projection_sharing = "q=k_v";
    c.output_gate = "headwise";
    c.value_gate = true;
    c.retention_gate = true;
    c.retention_sparsity = 0.25;
    run(c, "all mechanisms");
  }
};

QTEST_APPLESS_MAIN(TestGatesGradients)
#include "test_gates_gradients.moc"
