// Formula settings at non-default values, against their formulas written out here from the
// inputs (beside test_formula_settings, which checks that every setting changes the output and
// covers the softmax family, the sigmoid and RoPE's theta, NTK and linear scaling):
// - RoPE's Llama 3 band-wise scaling (factor, low and high frequency factors, original context)
//   and span_rotary_only, as angles;
// - momentum attention's gamma, the learnable sink's logit and the L1 score's rank (with its
//   learned projection and weight), as scores and weights from the trace's q and k;
// - the presence gate's tau, from the layer-0 block input (the embeddings).
#include <QtTest>

#include "model_support.h"

#include <cmath>
#include <numbers>

#include "positional/positional.h"

using namespace attnlab;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1};

// d_head 16 (8 rotary pairs, wavelengths 6 to 20,000 positions).
ModelConfig wideHeads(const std::string& attention, const std::string& positional) {
  ModelConfig c = testing::smallConfig(attention, positional);
  c.d_model = 32;
  c.n_heads = 2;
  return c;
}

// The rotary angles of positions 0..9, as the configured encoding gives them.
Mat anglesOf(const ModelConfig& c, int expectedPairs) {
  auto rope = PositionalRegistry::instance().create("rope");
  ParamStore params;
  if (auto why = rope->configure(c, params); !why.empty()) qFatal("rope refused its settings: %s", why.c_str());
  if (rope->rotaryPairs() != expectedPairs) qFatal("rope rotates %d pairs, expected %d", rope->rotaryPairs(), expectedPairs);
  std::vector<int> pos(10);
  for (int t = 0; t < 10; ++t) pos[t] = t;
  Mat angles;
  rope->rotaryAngles(0, Mat(), pos.data(), 1, 10, angles);
  return angles;
}

// Fails naming the first angle(t, m) that is not t * freq[m].
void compareAngles(const Mat& angles, const std::vector<double>& freq) {
  for (int t = 0; t < angles.rows(); ++t)
    for (int m = 0; m < static_cast<int>(freq.size()); ++m) {
      const double expected = t * freq[m];
      if (std::abs(angles(t, m) - expected) > 1e-6 * std::max(1.0, expected))
        QFAIL(qPrintable(QString("angle(%1, %2) = %3, expected %4").arg(t).arg(m).arg(angles(t, m)).arg(expected)));
    }
}

// Fails naming the first entry of a head's causal [T, T] matrix that differs from `expected` by
// more than `tolerance` (relative above 1).
void compareCausal(const Mat& actual, const Mat& expected, double tolerance, const QString& what) {
  for (int i = 0; i < expected.rows(); ++i)
    for (int j = 0; j <= i; ++j)
      if (std::abs(actual(i, j) - expected(i, j)) > tolerance * std::max(1.0, std::abs(static_cast<double>(expected(i, j)))))
        QFAIL(qPrintable(QString("%1(%2,%3) = %4, expected %5").arg(what).arg(i).arg(j).arg(actual(i, j)).arg(expected(i, j))));
}

// Causal softmax of beta * scores, with an extra logit `sink` in every row's denominator
// (-inf: none), computed in double.
Mat softmaxWithSink(const Mat& scores, double beta, double sink) {
  Mat a = Mat::Zero(scores.rows(), scores.cols());
  for (int i = 0; i < scores.rows(); ++i) {
    double sum = std::exp(sink);
    for (int j = 0; j <= i; ++j) sum += std::exp(beta * scores(i, j));
    for (int j = 0; j <= i; ++j) a(i, j) = static_cast<float>(std::exp(beta * scores(i, j)) / sum);
  }
  return a;
}

const Param& paramNamed(const Model& model, const std::string& name) {
  const Param* p = model.params().find(name);
  if (!p) qFatal("the model has no parameter %s", name.c_str());
  return *p;
}

}  // namespace

class TestFormulaValues : public QObject {
  Q_OBJECT

 private slots:
  // Llama 3 (Meta's reference apply_scaling): wavelength w = 2 pi / f; w < C / high keeps f,
  // w > C / low gives f / factor, between them (1 - s) f / factor + s f with
  // s = (C / w - low) / (high - low). At factor 6, low 1.5, high 10, C 400 the bands split the
  // eight wavelengths 6.3, 19.9 (kept) | 62.8, 198.7 (blended) | 628 and longer (divided).
  void llama3ScalingAtNonDefaultSettings() {
    ModelConfig c = wideHeads("softmax", "rope");
    const double factor = 6, low = 1.5, high = 10, context = 400, theta = 10000;
    c.positional_settings = {{"llama3_factor", factor}, {"llama3_low_freq_factor", low}, {"llama3_high_freq_factor", high},
                             {"llama3_original_context", context}};
    std::vector<double> freq;
    int kept = 0, blended = 0, divided = 0;
    for (int m = 0; m < 8; ++m) {
      const double f = std::pow(theta, -2.0 * m / 16), w = 2 * std::numbers::pi / f;
      if (w < context / high) {
        freq.push_back(f);
        ++kept;
      } else if (w > context / low) {
        freq.push_back(f / factor);
        ++divided;
      } else {
        const double s = (context / w - low) / (high - low);
        freq.push_back((1 - s) * f / factor + s * f);
        ++blended;
      }
    }
    QCOMPARE(kept, 2);
    QCOMPARE(blended, 2);
    QCOMPARE(divided, 4);
    compareAngles(anglesOf(c, 8), freq);
  }

  // GPT-NeoX's partial rotary: with rotary_fraction 0.5 (4 of 8 pairs) and span_rotary_only 1 the
  // exponents run over the rotated dimensions, f_m = theta^(-2m / 8), not theta^(-2m / 16).
  void spanRotaryOnlyAtNonDefaultSettings() {
    ModelConfig c = wideHeads("softmax", "rope");
    c.positional_settings = {{"theta", 500}, {"rotary_fraction", 0.5}, {"span_rotary_only", 1}};
    std::vector<double> freq;
    for (int m = 0; m < 4; ++m) freq.push_back(std::pow(500.0, -2.0 * m / 8));
    compareAngles(anglesOf(c, 4), freq);
  }

  // Momentum attention: q~_t = q_t + gamma (q_t - q_{t-1}) (q~_0 = q_0), keys alike, s = q~.k~ /
  // sqrt(d_head), a = softmax(beta s), at gamma 1.5 and -0.5 (default 0.5) and beta 1.3.
  void momentumGammaAtNonDefaultValues() {
    for (double gamma : {1.5, -0.5}) {
      ModelConfig c = testing::smallConfig("momentum", "none", 9, 12);
      c.attention_settings = {{"momentum_gamma", gamma}, {"temperature", 1.3}};
      const Trace trace = testing::traceOf(*testing::randomisedModel(c), kTokens);
      for (const auto& layer : trace.layers)
        for (const HeadTrace& h : layer.heads) {
          auto filtered = [gamma](const Mat& x) {
            Mat y = x;
            for (int t = 1; t < x.rows(); ++t) y.row(t) = x.row(t) + static_cast<float>(gamma) * (x.row(t) - x.row(t - 1));
            return y;
          };
          const Mat scores = (filtered(h.q) * filtered(h.k).transpose()) / std::sqrt(static_cast<float>(h.q.cols()));
          compareCausal(h.scores, scores, 1e-5, QString("gamma %1: s").arg(gamma));
          compareCausal(h.weights, softmaxWithSink(scores, 1.3, -std::numeric_limits<double>::infinity()), 2e-6,
                        QString("gamma %1: a").arg(gamma));
          if (QTest::currentTestFailed()) return;
        }
    }
  }

  // The learnable sink: a_ij = exp(beta s_ij) / (exp(z_h) + sum_j' exp(beta s_ij')), with the sink
  // logits set away from their initial 0 to a different value per head, at beta 1.4.
  void sinkLogitAtNonDefaultValues() {
    ModelConfig c = testing::smallConfig("softmax_sink", "alibi", 9, 12);
    c.attention_settings = {{"temperature", 1.4}};
    auto model = testing::randomisedModel(c);
    const std::vector<float> sinks = {0.9f, -1.3f, 2.2f, 0.0f};
    for (int l = 0; l < c.n_layers; ++l) {
      Param* p = model->params().find("blocks." + std::to_string(l) + ".attn.sink_logit");
      QVERIFY(p);
      for (int hd = 0; hd < c.n_heads; ++hd) p->value(0, hd) = sinks[hd] + 0.5f * l;
    }
    const Trace trace = testing::traceOf(*model, kTokens);
    for (int l = 0; l < c.n_layers; ++l)
      for (int hd = 0; hd < c.n_heads; ++hd) {
        const HeadTrace& h = trace.layers[l].heads[hd];
        compareCausal(h.weights, softmaxWithSink(h.scores, 1.4, sinks[hd] + 0.5 * l), 2e-6, QString("layer %1 head %2: a").arg(l).arg(hd));
        if (QTest::currentTestFailed()) return;
      }
  }

  // The L1 score at rank 2 (default 4): s_ij = q_i.k_j / sqrt(d_head) - lambda_h |P_h q_i - P_h k_j|_1,
  // P_h the [2, d_head] block of blocks.l.attn.l1_proj, lambda_h = exp(l1_log_lambda_h); a = softmax(beta s).
  void l1RankAtNonDefaultValue() {
    ModelConfig c = testing::smallConfig("l1_score", "none", 9, 12);
    const int rank = 2;
    c.attention_settings = {{"l1_rank", rank}, {"temperature", 0.8}};
    const auto model = testing::randomisedModel(c);
    const Trace trace = testing::traceOf(*model, kTokens);
    const int d = c.headDim();
    for (int l = 0; l < c.n_layers; ++l) {
      const std::string prefix = "blocks." + std::to_string(l) + ".attn.";
      const Param& proj = paramNamed(*model, prefix + "l1_proj");
      const Param& logLambda = paramNamed(*model, prefix + "l1_log_lambda");
      QCOMPARE(proj.shape, (std::vector<int>{c.n_heads, rank, d}));
      for (int hd = 0; hd < c.n_heads; ++hd) {
        const HeadTrace& h = trace.layers[l].heads[hd];
        Mat P(rank, d);
        for (int r = 0; r < rank; ++r)
          for (int k = 0; k < d; ++k) P(r, k) = proj.value(hd, r * d + k);
        const double lambda = std::exp(static_cast<double>(logLambda.value(0, hd)));
        Mat scores = Mat::Zero(h.q.rows(), h.q.rows());
        for (int i = 0; i < h.q.rows(); ++i)
          for (int j = 0; j <= i; ++j) {
            const double dot = h.q.row(i).cast<double>().dot(h.k.row(j).cast<double>()) / std::sqrt(static_cast<double>(d));
            const double distance = (P.cast<double>() * (h.q.row(i) - h.k.row(j)).transpose().cast<double>()).cwiseAbs().sum();
            scores(i, j) = static_cast<float>(dot - lambda * distance);
          }
        compareCausal(h.scores, scores, 1e-5, QString("layer %1 head %2: s").arg(l).arg(hd));
        compareCausal(h.weights, softmaxWithSink(scores, 0.8, -std::numeric_limits<double>::infinity()), 2e-6,
                      QString("layer %1 head %2: a").arg(l).arg(hd));
        if (QTest::currentTestFailed()) return;
      }
    }
  }

  // Presence: p_t = |h_t|^2 / (tau + |h_t|^2) of the block input h (the residual stream entering
  // the block, in layer 0 the token's embedding), at tau 3 and 0.2 (default 0.01), where p is far from 1.
  void presenceTauAtNonDefaultValues() {
    for (double tau : {3.0, 0.2}) {
      ModelConfig c = testing::smallConfig("oattention", "none", 9, 12);
      c.attention_settings = {{"presence_tau", tau}};
      const auto model = testing::randomisedModel(c);
      const Trace trace = testing::traceOf(*model, kTokens);
      const Param& embedding = paramNamed(*model, "tok_emb.weight");
      const auto& presence = trace.layers[0].heads[0].presence;
      QCOMPARE(static_cast<int>(presence.size()), static_cast<int>(kTokens.size()));
      for (size_t t = 0; t < kTokens.size(); ++t) {
        const double n = embedding.value.row(kTokens[t]).cast<double>().squaredNorm();
        const double expected = n / (tau + n);
        if (std::abs(presence[t] - expected) > 1e-6)
          QFAIL(qPrintable(QString("tau %1, position %2: p = %3, expected %4").arg(tau).arg(t).arg(presence[t]).arg(expected)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestFormulaValues)
#include "test_formula_values.moc"
