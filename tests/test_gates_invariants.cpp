// Exact invariants of the layer mechanisms: symmetric scores under query-key sharing, K/V shared
// bitwise across the heads of a group, OAttention's null-insertion and zero-receiver contracts
// (to the bit, at the layer), KV-cache bytes per token, the retention gate's sparsity pressure,
// and head-wise output gating as element-wise gating with a constant gate per head.
#include <QtTest>

#include "model_support.h"

#include <cmath>
#include <cstring>

#include "core/random.h"
#include "io/config_json.h"
#include "model/attention_layer.h"
#include "kv/kv_bytes.h"
#include "model/model.h"
#include "model/workspace.h"
#include "positional/positional.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
using testing::smallConfig;
using testing::traceOf;

const std::vector<int> kProbe = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1};

bool sameBits(const Mat& a, const Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0;
}

// q_i . k_j in index order, so that equal inputs give equal bits whatever i and j are.
Mat dotProducts(const Mat& q, const Mat& k) {
  Mat m(q.rows(), k.rows());
  for (Eigen::Index i = 0; i < q.rows(); ++i)
    for (Eigen::Index j = 0; j < k.rows(); ++j) {
      float s = 0;
      for (Eigen::Index d = 0; d < q.cols(); ++d) s += q(i, d) * k(j, d);
      m(i, j) = s;
    }
  return m;
}

Mat randomMat(int rows, int cols, Rng& rng) {
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  return m;
}

// One attention layer built alone, with its parameters drawn at a healthy scale.
struct LayerRig {
  ModelConfig config;
  ParamStore params;
  std::unique_ptr<PositionalEncoding> positional;
  std::unique_ptr<AttentionLayer> layer;

  explicit LayerRig(const ModelConfig& c) : config(c) {
    positional = PositionalRegistry::instance().create(c.positional);
    if (!positional || !positional->configure(c, params).empty()) throw std::runtime_error("positional " + c.positional);
    layer = std::make_unique<AttentionLayer>(c, 0, *positional, params);
    Rng rng(17);
    positional->initialise(params, rng);
    layer->initialise(rng, 0.02f);
    for (auto& p : params.all())
      for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, 0.3f);
  }
  Mat forward(const Mat& x, const Mat& h, const std::vector<int>& pos, AttentionActs& acts) const {
    Mat y;
    layer->forward(x, h, pos.data(), 1, static_cast<int>(pos.size()), acts, y);
    return y;
  }
};

// Rows of `m` with a row `extra` inserted at `at`.
Mat withRowInserted(const Mat& m, int at, const RowVec& extra) {
  Mat out(m.rows() + 1, m.cols());
  out.topRows(at) = m.topRows(at);
  out.row(at) = extra;
  out.bottomRows(m.rows() - at) = m.bottomRows(m.rows() - at);
  return out;
}
}  // namespace

class TestGatesInvariants : public QObject {
  Q_OBJECT

 private slots:
  // ---- projection sharing ---------------------------------------------------------------------

  void parameterNamesFollowSharing() {
    ModelConfig c = smallConfig("softmax", "rope", 11);
    c.n_kv_heads = 2;
    const int dh = c.headDim(), d = c.d_model;
    const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
        {"qkv", {"wq", "wk", "wv"}}, {"q_k=v", {"wq", "wkv"}}, {"q=k_v", {"wqk", "wv"}}, {"q=k=v", {"wqkv"}}};
    for (const auto& [sharing, names] : expected) {
      c.projection_sharing = sharing;
      Model model(c, 1);
      int projections = 0;
      for (const auto& p : model.params().all())
        if (p->name.rfind("blocks.0.attn.w", 0) == 0 && p->name != "blocks.0.attn.wo.weight") ++projections;
      QCOMPARE(projections, static_cast<int>(names.size()));
      for (const std::string& name : names) {
        const Param* p = model.params().find("blocks.0.attn." + name + ".weight");
        QVERIFY2(p, qPrintable(QString::fromStdString(sharing + ": no " + name)));
        const int heads = name == "wq" ? c.n_heads : c.n_kv_heads;
        QCOMPARE(p->shape, (std::vector<int>{heads * dh, d}));
      }
    }
  }

  // Q=K-V: q_i = k_i per head, so q_i.k_j = q_j.k_i: the scores are symmetric before masking.
  void queryKeySharingGivesSymmetricScores_data() {
    QTest::addColumn<QString>("sharing");
    QTest::addColumn<QString>("positional");
    QTest::addColumn<int>("kvHeads");
    for (const char* sharing : {"q=k_v", "q=k=v"})
      for (const char* positional : {"rope", "none", "alibi"})
        for (int kvHeads : {0, 2})
          QTest::newRow(qPrintable(QString("%1 %2 kv%3").arg(sharing, positional).arg(kvHeads))) << sharing << positional << kvHeads;
  }
  void queryKeySharingGivesSymmetricScores() {
    QFETCH(QString, sharing);
    QFETCH(QString, positional);
    QFETCH(int, kvHeads);
    ModelConfig c = smallConfig("softmax", positional.toStdString(), 11);
    c.projection_sharing = sharing.toStdString();
    c.n_kv_heads = kvHeads;
    Model model(c, 3);
    const Trace trace = traceOf(model, kProbe);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim()));
    for (const LayerTrace& layer : trace.layers)
      for (const HeadTrace& head : layer.heads) {
        QVERIFY(sameBits(head.q, head.k));
        const Mat m = dotProducts(head.q, head.k);
        QVERIFY(sameBits(m, Mat(m.transpose())));
        const int T = static_cast<int>(m.rows());
        for (int i = 0; i < T; ++i)  // and these are what the variant scored (up to the bias)
          for (int j = 0; j <= i; ++j)
            if (positional != "alibi") QVERIFY(std::abs(head.scores(i, j) - scale * m(i, j)) < 1e-4f);
      }
    // The standard layout has no such symmetry (the check can fail).
    c.projection_sharing = "qkv";
    const Trace standard = traceOf(Model(c, 3), kProbe);
    const HeadTrace& head = standard.layers[0].heads[0];
    const Mat m = dotProducts(head.q, head.k);
    QVERIFY((m - m.transpose()).cwiseAbs().maxCoeff() > 1e-3f);
  }

  // Q-K=V and Q=K=V: without rotation or gate on values, values are the keys bit for bit.
  void keyValueSharingGivesEqualKeysAndValues() {
    ModelConfig c = smallConfig("softmax", "learned", 11);
    for (const char* sharing : {"q_k=v", "q=k=v"}) {
      c.projection_sharing = sharing;
      const Trace trace = traceOf(Model(c, 5), kProbe);
      for (const HeadTrace& head : trace.layers[1].heads) QVERIFY(sameBits(head.k, head.v));
    }
    c.projection_sharing = "qkv";
    const Trace standard = traceOf(Model(c, 5), kProbe);
    const HeadTrace& head = standard.layers[1].heads[0];
    QVERIFY(!sameBits(head.k, head.v));
  }

  // GQA and MQA: the query heads of a group read one K and one V, bitwise; other groups differ;
  // and each head's scores are its own q against the shared k.
  void groupedHeadsShareKeysAndValues_data() {
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<QString>("sharing");
    for (int kvHeads : {2, 1})
      for (const char* sharing : {"qkv", "q_k=v"}) QTest::newRow(qPrintable(QString("kv%1 %2").arg(kvHeads).arg(sharing))) << kvHeads << sharing;
  }
  void groupedHeadsShareKeysAndValues() {
    QFETCH(int, kvHeads);
    QFETCH(QString, sharing);
    ModelConfig c = smallConfig("softmax", "rope", 11);
    c.n_kv_heads = kvHeads;
    c.projection_sharing = sharing.toStdString();
    const Trace trace = traceOf(Model(c, 9), kProbe);
    const int group = c.n_heads / kvHeads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim()));
    for (const LayerTrace& layer : trace.layers)
      for (int h = 0; h < c.n_heads; ++h) {
        const HeadTrace& head = layer.heads[h];
        const HeadTrace& first = layer.heads[(h / group) * group];
        QVERIFY(sameBits(head.k, first.k));
        QVERIFY(sameBits(head.v, first.v));
        if (h % group == 0 && h > 0) QVERIFY(!sameBits(head.k, layer.heads[h - 1].k));
        const Mat expected = scale * head.q * head.k.transpose();
        for (int i = 0; i < expected.rows(); ++i)
          for (int j = 0; j <= i; ++j) QVERIFY(std::abs(head.scores(i, j) - expected(i, j)) < 1e-4f);
      }
  }

  void kvCacheBytesPerToken() {
    ModelConfig c = smallConfig("softmax", "alibi", 11);  // a score bias: stored keys are the projections
    c.d_model = 128;
    c.n_heads = 8;
    const size_t standard = 2 /*K, V*/ * 8 /*heads*/ * 16 /*d_head*/ * 4 /*bytes*/ * 2 /*layers*/;
    QCOMPARE(attnlab::kvCacheBytesPerToken(c), standard);
    c.projection_sharing = "q=k_v";  // sharing queries keeps the cache
    QCOMPARE(attnlab::kvCacheBytesPerToken(c), standard);
    for (const char* sharing : {"q_k=v", "q=k=v"}) {  // one stored tensor: half
      c.projection_sharing = sharing;
      QCOMPARE(attnlab::kvCacheBytesPerToken(c) * 2, standard);
    }
    // where the stored values differ from the stored keys, both are held: RoPE turns the keys
    // alone, the value gate changes the values alone; rotating values as well makes them equal again
    c.positional = "rope";
    QCOMPARE(attnlab::kvCacheBytesPerToken(c), standard);
    c.positional = "accumulated_rotation";
    c.positional_settings["rotate_values"] = 1;
    QCOMPARE(attnlab::kvCacheBytesPerToken(c) * 2, standard);
    c.positional_settings.clear();
    c.positional = "alibi";
    c.value_gate = true;
    QCOMPARE(attnlab::kvCacheBytesPerToken(c), standard);
    c.value_gate = false;
    // quantised rows: d_head codes of one byte (int8) or half a byte (int4) plus one float scale
    QCOMPARE(attnlab::kvCacheBytesPerToken(c, KvQuant::int8), size_t(8 * (16 + 4) * 2));
    QCOMPARE(attnlab::kvCacheBytesPerToken(c, KvQuant::int4), size_t(8 * (8 + 4) * 2));
    c.projection_sharing = "q_k=v";
    c.n_kv_heads = 2;  // GQA-4: 8 query heads in groups of 4
    QCOMPARE(attnlab::kvCacheBytesPerToken(c) * 8, standard);  // saves exactly 87.5%
    QCOMPARE(1.0 - static_cast<double>(attnlab::kvCacheBytesPerToken(c)) / standard, 0.875);
    c.n_kv_heads = 1;  // MQA: saves 15/16 of the remaining half, 96.875% in all
    QCOMPARE(attnlab::kvCacheBytesPerToken(c) * 16, standard);
    c.projection_sharing = "qkv";
    c.n_kv_heads = 0;
    c.attention = {"softmax", "linear"};  // linear attention decodes from a constant state: 0 per token
    QCOMPARE(attnlab::kvCacheBytesPerToken(c) * 2, standard);
  }

  // ---- OAttention: exact contracts at the layer ------------------------------------------

  // A token whose block input h is zero, inserted anywhere as a source, leaves every other
  // output of the layer unchanged to the bit (its projections x are arbitrary).
  void oattentionNullInsertion_data() {
    QTest::addColumn<QString>("positional");
    QTest::addColumn<bool>("gates");
    for (const char* positional : {"rope", "alibi", "none"})
      for (bool gates : {false, true}) QTest::newRow(qPrintable(QString("%1%2").arg(positional, gates ? " +gates" : ""))) << positional << gates;
  }
  void oattentionNullInsertion() {
    QFETCH(QString, positional);
    QFETCH(bool, gates);
    ModelConfig c = smallConfig("softmax", positional.toStdString(), 11);
    c.attention = {"oattention"};
    c.attention_settings["presence_tau"] = 0.5;
    c.n_kv_heads = 2;
    if (gates) {
      c.output_gate = "elementwise";
      c.value_gate = true;
      c.retention_gate = true;
      c.projection_sharing = "q_k=v";
    }
    const LayerRig rig(c);
    const int T = 9;
    Rng rng(4);
    const Mat x = randomMat(T, c.d_model, rng), h = randomMat(T, c.d_model, rng);
    std::vector<int> pos(T);
    for (int t = 0; t < T; ++t) pos[t] = t;
    AttentionActs acts;
    const Mat y = rig.forward(x, h, pos, acts);
    QVERIFY(y.allFinite() && y.cwiseAbs().maxCoeff() > 1e-3f);

    for (int at : {0, 1, 4, T}) {
      const Mat x2 = withRowInserted(x, at, randomMat(1, c.d_model, rng));
      const Mat h2 = withRowInserted(h, at, RowVec::Zero(c.d_model));
      std::vector<int> pos2 = pos;  // every original token keeps its position; the null one shares its neighbour's
      pos2.insert(pos2.begin() + at, at < T ? pos[at] : T);
      AttentionActs acts2;
      const Mat y2 = rig.forward(x2, h2, pos2, acts2);
      Mat others(T, y.cols());  // y2 without the inserted row
      others << y2.topRows(at), y2.bottomRows(T - at);
      QVERIFY2(sameBits(y, others), qPrintable(QString("inserting a null token at %1 changes other outputs by up to %2")
                                                   .arg(at)
                                                   .arg((others - y).cwiseAbs().maxCoeff())));
      QVERIFY(y2.row(at).isZero(0));  // and, being a zero receiver, it outputs zero itself
      for (int bh = 0; bh < c.n_heads; ++bh)  // weight exactly 0 from every query that sees it
        for (int i = at; i <= T; ++i) QCOMPARE(acts2.weights[(static_cast<size_t>(bh) * (T + 1) + i) * (T + 1) + at], 0.0f);
    }
  }

  // A zero receiver outputs exactly 0; rows whose sources are all absent output 0, not NaN.
  void oattentionZeroReceiverAndEmptySupport() {
    ModelConfig c = smallConfig("softmax", "rope", 11);
    c.attention = {"oattention"};
    c.output_gate = "headwise";
    const LayerRig rig(c);
    const int T = 8;
    Rng rng(8);
    const Mat x = randomMat(T, c.d_model, rng);
    Mat h = randomMat(T, c.d_model, rng);
    h.row(5).setZero();  // a zero receiver among present tokens
    h.topRows(3).setZero();  // rows 0..2 see only absent sources: empty support
    std::vector<int> pos(T);
    for (int t = 0; t < T; ++t) pos[t] = t;
    AttentionActs acts;
    const Mat y = rig.forward(x, h, pos, acts);
    QVERIFY(y.allFinite());
    for (int t : {0, 1, 2, 5}) {
      for (Eigen::Index d = 0; d < y.cols(); ++d) QCOMPARE(y(t, d), 0.0f);
      QCOMPARE(acts.presence[t], 0.0f);
    }
    for (int t : {3, 4, 6, 7}) QVERIFY(y.row(t).cwiseAbs().maxCoeff() > 1e-4f);
    for (float w : acts.weights) QVERIFY(std::isfinite(w));
    // Row 3's only present source is itself: all its weight is on key 3.
    for (int hd = 0; hd < c.n_heads; ++hd) QCOMPARE(acts.weights[(static_cast<size_t>(hd) * T + 3) * T + 3], 1.0f);
  }

  // Presence and gates are in the trace.
  void traceShowsPresenceAndGates() {
    ModelConfig c = smallConfig("softmax", "rope", 11);
    c.attention = {"oattention", "softmax"};
    c.retention_gate = true;
    c.output_gate = "elementwise";
    const Trace trace = traceOf(Model(c, 2), kProbe);
    const int T = static_cast<int>(kProbe.size());
    const HeadTrace& o = trace.layers[0].heads[1];
    QCOMPARE(static_cast<int>(o.presence.size()), T);
    for (float p : o.presence) QVERIFY(p > 0 && p < 1);
    for (const HeadTrace* head : {&o, &trace.layers[1].heads[2]}) {
      QCOMPARE(static_cast<int>(head->gate.size()), T);
      QCOMPARE(static_cast<int>(head->output_gate.size()), T);
      for (float g : head->gate) QVERIFY(g > 0 && g < 1);
    }
    QVERIFY(trace.layers[1].heads[0].presence.empty());  // softmax does not use presence
  }

  // ---- retention sparsity, head-wise output gate = element-wise, value gate ----------------------

  void retentionSparsityLowersMeanGate() {
    auto meanGateAfterTraining = [](double lambda) {
      const ExperimentConfig e = testing::gatedToyLanguage(smallConfig("softmax", "rope", 11), lambda);
      Trainer trainer(e);
      for (int s = 0; s < e.train.steps; ++s) trainer.trainStep();
      const Trace trace = trainer.trace(trainer.probeTokens());
      double sum = 0;
      int n = 0;
      for (const LayerTrace& layer : trace.layers)
        for (const HeadTrace& head : layer.heads)
          for (float g : head.gate) sum += g, ++n;
      return sum / n;
    };
    const double free = meanGateAfterTraining(0.0), pressed = meanGateAfterTraining(2.0);
    QVERIFY2(pressed < free - 0.2, qPrintable(QString("mean gate %1 with lambda 2 vs %2 without").arg(pressed).arg(free)));
  }

  // The sparsity term shapes training only: validation reports the task's cross-entropy alone, so two
  // untrained models that differ only in lambda validate to the same loss, bit for bit.
  void validationLossExcludesSparsityTerm() {
    auto untrainedValidationLoss = [](double lambda) {
      ExperimentConfig e;
      e.model = smallConfig("softmax", "rope", 11);
      e.model.vocab = 0;
      e.model.retention_gate = true;
      e.model.retention_sparsity = lambda;
      e.task.name = "toy_language";
      e.train.batch = 4;
      e.train.threads = 1;
      Trainer trainer(e);
      return trainer.evaluate(2).loss;
    };
    QCOMPARE(untrainedValidationLoss(5.0), untrainedValidationLoss(0.0));
  }

  void headwiseGateEqualsElementwiseWithConstantGatePerHead() {
    ModelConfig c = smallConfig("softmax", "rope", 11);
    c.output_gate = "headwise";
    Model headwise(c, 6);
    c.output_gate = "elementwise";
    Model elementwise(c, 6);
    Rng rng(3);
    for (auto& p : headwise.params().all()) {
      for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, 0.3f);
      Param* q = elementwise.params().find(p->name);
      QVERIFY(q);
      if (p->name.find("gate.") == std::string::npos) {
        q->value = p->value;
        continue;
      }
      const bool bias = p->name.find("bias") != std::string::npos;
      for (int r = 0; r < c.n_heads * c.headDim(); ++r) {  // each of a head's d_head gates copies the head's gate
        const int head = r / c.headDim();
        if (bias) q->value(0, r) = p->value(0, head);
        else q->value.row(r) = p->value.row(head);
      }
    }
    const Trace a = traceOf(headwise, kProbe), b = traceOf(elementwise, kProbe);
    QVERIFY((a.logits - b.logits).cwiseAbs().maxCoeff() < 1e-5f);
    for (size_t l = 0; l < a.layers.size(); ++l)
      for (int h = 0; h < c.n_heads; ++h)
        for (size_t t = 0; t < kProbe.size(); ++t)
          QVERIFY(std::abs(a.layers[l].heads[h].output_gate[t] - b.layers[l].heads[h].output_gate[t]) < 1e-6f);
    c.output_gate = "none";  // and the gate matters: without it the logits differ
    Model ungated(c, 6);
    for (auto& p : ungated.params().all()) p->value = headwise.params().find(p->name)->value;
    QVERIFY((traceOf(ungated, kProbe).logits - a.logits).cwiseAbs().maxCoeff() > 1e-3f);
  }

  void valueGateBoundsValues() {
    ModelConfig c = smallConfig("softmax", "rope", 11);  // rope turns q and k only: values stay as gated
    c.value_gate = true;
    const Trace trace = traceOf(Model(c, 4), kProbe);
    for (const LayerTrace& layer : trace.layers)
      for (const HeadTrace& head : layer.heads) QVERIFY(head.v.minCoeff() > 0.0f && head.v.maxCoeff() < 1.0f);
  }

  // ---- configuration ----------------------------------------------------------------------------

  void configFieldsRoundTripAndValidate() {
    ExperimentConfig e;
    e.model.projection_sharing = "q=k_v";
    e.model.output_gate = "headwise";
    e.model.value_gate = true;
    e.model.retention_gate = true;
    e.model.retention_sparsity = 0.125;
    ExperimentConfig back;
    QCOMPARE(configFromJson(configToJson(e), back), std::string());
    QCOMPARE(back.model.projection_sharing, std::string("q=k_v"));
    QCOMPARE(back.model.output_gate, std::string("headwise"));
    QVERIFY(back.model.value_gate && back.model.retention_gate);
    QCOMPARE(back.model.retention_sparsity, 0.125);
    QCOMPARE(validate(back), std::string());
    QCOMPARE(applyOverride(back, "model.output_gate=elementwise"), std::string());
    QCOMPARE(back.model.output_gate, std::string("elementwise"));

    const std::pair<std::string, std::string> bad[] = {
        {"model.projection_sharing=q-k=v", "model.projection_sharing 'q-k=v' is not available (known: qkv, q_k=v, q=k_v, q=k=v, latent)"},
        {"model.output_gate=sometimes", "model.output_gate 'sometimes' is not available (known: none, elementwise, headwise)"},
        {"model.retention_sparsity=-1", "model.retention_sparsity must be in [0, 100]"},
        {"model.attention_settings.presence_tau=0", "oattention: presence_tau = 0 is outside [1e-06, 1000]"},
    };
    for (const auto& [assignment, message] : bad) {
      ExperimentConfig c;
      c.model.attention = {"oattention"};
      QCOMPARE(applyOverride(c, assignment), std::string());
      QCOMPARE(validate(c), message);
    }
    ExperimentConfig ungated;
    ungated.model.retention_sparsity = 0.5;
    QCOMPARE(validate(ungated), std::string("model.retention_sparsity needs model.retention_gate = true (it penalises the gate's mean)"));
  }
};

QTEST_APPLESS_MAIN(TestGatesInvariants)
#include "test_gates_invariants.moc"
