// Exact invariants of the sigmoid, linear, sliding-window and momentum variants, and of the
// emulated score precision (ALiBi's far weights underflow to exactly zero in fp16).
#include <QtTest>

#include "model_support.h"

#include <omp.h>

#include <cmath>
#include <limits>

#include "attention/attention.h"
#include "attention/linear_state.h"
#include "attention/precision.h"
#include "core/random.h"
#include "model/model.h"
#include "model/workspace.h"
#include "positional/alibi.h"

using namespace attnlab;

namespace {
using testing::smallConfig;
using testing::randomisedModel;
using testing::traceOf;

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Share of visible (j <= i) weights that are exactly zero, per head, for one layer's trace.
std::vector<double> zeroShares(const LayerTrace& layer) {
  std::vector<double> shares;
  for (const HeadTrace& head : layer.heads) {
    const int T = static_cast<int>(head.weights.rows());
    long zeros = 0;
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) zeros += head.weights(i, j) == 0.0f;
    shares.push_back(double(zeros) / (T * (T + 1) / 2.0));
  }
  return shares;
}

QString sharesText(const std::vector<double>& shares) {
  QString out;
  for (double s : shares) out += QString::number(100 * s, 'f', 1) + "% ";
  return out.trimmed();
}
}  // namespace

class TestVariantInvariants : public QObject {
  Q_OBJECT

 private slots:
  // One thread: these cases are tiny, and OpenMP's spinning threads slow them down by orders of
  // magnitude when other jobs share the cores.
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  // a_ij = sigmoid(s_ij - log(i + 1)) on its own: row sums are whatever the sigmoids add up to, not 1.
  void sigmoidRowsAreNotRenormalised() {
    const Trace trace = traceOf(*randomisedModel(smallConfig("sigmoid", "alibi"), 0.5f), kTokens);
    int rowsAwayFromOne = 0, rows = 0;
    for (const LayerTrace& layer : trace.layers)
      for (const HeadTrace& head : layer.heads) {
        const int T = static_cast<int>(head.weights.rows());
        for (int i = 0; i < T; ++i) {
          double sum = 0, sumOfSigmoids = 0;
          for (int j = 0; j <= i; ++j) {
            const double expected = sigmoid(head.scores(i, j) - std::log(i + 1.0));
            QVERIFY2(std::abs(head.weights(i, j) - expected) < 1e-6,
                     qPrintable(QString("a(%1,%2) = %3, sigmoid gives %4").arg(i).arg(j).arg(head.weights(i, j)).arg(expected)));
            sum += head.weights(i, j);
            sumOfSigmoids += expected;
          }
          for (int j = i + 1; j < T; ++j) QVERIFY(head.weights(i, j) == 0.0f);
          QVERIFY(std::abs(sum - sumOfSigmoids) < 1e-5);
          rowsAwayFromOne += std::abs(sum - 1.0) > 1e-2;
          ++rows;
        }
      }
    qInfo("sigmoid: %d of %d rows have a total weight more than 0.01 away from 1", rowsAwayFromOne, rows);
    QVERIFY(rowsAwayFromOne > rows / 2);
  }

  void sigmoidLearnedBiasStartsAtMinusLogContext() {
    ModelConfig c = smallConfig("sigmoid", "rope");
    c.attention_settings["sigmoid_bias_learned"] = 1;
    const Model model(c, 3);
    for (int l = 0; l < c.n_layers; ++l) {
      const Param* bias = model.params().find("blocks." + std::to_string(l) + ".attn.sigmoid_bias");
      QVERIFY(bias);
      QCOMPARE(bias->shape, std::vector<int>{c.n_heads});
      for (int h = 0; h < c.n_heads; ++h) QCOMPARE(bias->value(0, h), -std::log(static_cast<float>(c.context)));
    }
  }

  void windowWeightsAreExactlyZeroOutsideTheWindow() {
    ModelConfig c = smallConfig("window", "rope");
    c.attention_settings["window"] = 3;
    const Trace trace = traceOf(*randomisedModel(c, 0.5f), kTokens);
    for (const LayerTrace& layer : trace.layers)
      for (const HeadTrace& head : layer.heads) {
        const int T = static_cast<int>(head.weights.rows());
        for (int i = 0; i < T; ++i) {
          double sum = 0;
          for (int j = 0; j < T; ++j) {
            if (j > i || j < i - 2) {
              QVERIFY(head.weights(i, j) == 0.0f);  // exactly: QCOMPARE on floats would be fuzzy
              QVERIFY(std::isinf(head.scores(i, j)) && head.scores(i, j) < 0);
            } else {
              QVERIFY(head.weights(i, j) > 0.0f);
              sum += head.weights(i, j);
            }
          }
          QVERIFY(std::abs(sum - 1.0) < 1e-5);
        }
      }
  }

  // Stepping the constant-size state token by token reproduces the parallel form, key gate included.
  void linearRecurrentEqualsParallel() {
    ModelConfig config;
    ParamStore params;
    auto linear = AttentionRegistry::instance().create("linear");
    QVERIFY(linear && !linear->usesDotScores());
    QCOMPARE(linear->configure(config, "blocks.0.attn.", params), std::string());
    const AttentionShape s{2, 40, 4, 2, 8};
    Rng rng(9);
    auto fill = [&](size_t n, float lo, float hi) {
      std::vector<float> x(n);
      for (float& v : x) v = lo + static_cast<float>(rng.uniform()) * (hi - lo);
      return x;
    };
    const std::vector<float> q = fill(s.qSize(), -2, 2), k = fill(s.kvSize(), -2, 2), v = fill(s.kvSize(), -1, 1),
                             gate = fill(static_cast<size_t>(s.B) * s.H * s.T, 0.1f, 1);
    std::vector<float> o(s.qSize()), scores(s.mapSize()), weights(s.mapSize());
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    for (const float* g : {static_cast<const float*>(nullptr), gate.data()}) {
      linear->forward(AttentionInputs{s, q.data(), k.data(), v.data(), nullptr, nullptr, g, 1.0f}, out);
      float maxErr = 0;
      for (int b = 0; b < s.B; ++b)
        for (int h = 0; h < s.H; ++h) {
          const int kvh = h / s.group();
          LinearAttentionState state(s.dHead);
          std::vector<float> step(s.dHead);
          for (int t = 0; t < s.T; ++t) {
            const size_t qi = ((static_cast<size_t>(b) * s.H + h) * s.T + t) * s.dHead;
            const size_t ki = ((static_cast<size_t>(b) * s.Hkv + kvh) * s.T + t) * s.dHead;
            state.step(&q[qi], &k[ki], &v[ki], step.data(), g ? g[(static_cast<size_t>(b) * s.H + h) * s.T + t] : 1.0f);
            for (int m = 0; m < s.dHead; ++m) maxErr = std::max(maxErr, std::abs(step[m] - o[qi + m]));
          }
          QCOMPARE(state.bytes(), sizeof(float) * (s.dHead * s.dHead + s.dHead));
        }
      qInfo("linear: recurrent vs parallel, max |difference| %.3g (%s key gate)", maxErr, g ? "with" : "without");
      QVERIFY2(maxErr < 1e-5f, qPrintable(QString("max difference %1").arg(maxErr)));
    }
    // The map is the row-normalised phi(q).phi(k): rows sum to 1, masked above the diagonal.
    const Eigen::Map<const Mat> A(weights.data(), s.T, s.T), S(scores.data(), s.T, s.T);
    for (int i = 0; i < s.T; ++i) {
      QVERIFY(std::abs(A.row(i).sum() - 1.0f) < 1e-5f);
      for (int j = i + 1; j < s.T; ++j) QVERIFY(A(i, j) == 0.0f && std::isinf(S(i, j)));
    }
  }

  // gamma = 0 makes the high-pass filter the identity: every logit equals softmax's to the bit.
  void momentumWithGammaZeroIsSoftmax() {
    ModelConfig c = smallConfig("softmax", "rope");
    const Trace reference = traceOf(*randomisedModel(c, 0.5f), kTokens);
    c.attention = {"momentum"};
    c.attention_settings["momentum_gamma"] = 0;
    QVERIFY(traceOf(*randomisedModel(c, 0.5f), kTokens).logits == reference.logits);
    c.attention_settings["momentum_gamma"] = 0.5;
    const Trace filtered = traceOf(*randomisedModel(c, 0.5f), kTokens);
    QVERIFY(filtered.logits != reference.logits);
    // The first token has no velocity: its row of scores (one visible key) matches softmax's.
    QVERIFY(filtered.layers[0].heads[0].scores(0, 0) == reference.layers[0].heads[0].scores(0, 0));
  }

  // A NaN query must reach the output (and so the loss, where training stops with a reason),
  // never be absorbed into an all-zero row.
  void nanReachesTheOutput_data() {
    QTest::addColumn<QString>("variant");
    for (const char* name : {"softmax", "sigmoid", "linear", "window", "momentum"}) QTest::newRow(name) << name;
  }
  void nanReachesTheOutput() {
    QFETCH(QString, variant);
    ModelConfig config;
    ParamStore params;
    auto attn = AttentionRegistry::instance().create(variant.toStdString());
    QVERIFY(attn && attn->configure(config, "blocks.0.attn.", params).empty());
    const AttentionShape s{1, 5, 1, 1, 4};
    std::vector<float> q(s.qSize(), 0.3f), k(s.kvSize(), -0.2f), v(s.kvSize(), 1.0f);
    std::vector<float> o(s.qSize()), scores(s.mapSize()), weights(s.mapSize());
    q[3 * s.dHead] = std::numeric_limits<float>::quiet_NaN();  // token 3's query
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    attn->forward(AttentionInputs{s, q.data(), k.data(), v.data(), nullptr, nullptr, nullptr, 0.5f}, out);
    QVERIFY(std::isnan(o[3 * s.dHead]));
  }

  // Exact comparisons throughout (QCOMPARE on floats is fuzzy).
  void roundingToBf16AndFp16() {
    QVERIFY(roundToBf16(1.0f + std::ldexp(1.0f, -8)) == 1.0f);                             // tie to even (down)
    QVERIFY(roundToBf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 1.0f + std::ldexp(1.0f, -6));  // tie to even (up)
    QVERIFY(roundToBf16(-3.3f) == -3.296875f);
    QVERIFY(std::isinf(roundToBf16(3.4e38f)));
    QVERIFY(roundToBf16(1e-39f) == std::ldexp(11.0f, -133));  // subnormals in steps of 2^-133

    QVERIFY(roundToFp16(1.0f + std::ldexp(1.0f, -11)) == 1.0f);
    QVERIFY(roundToFp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
    QVERIFY(roundToFp16(65504.0f) == 65504.0f);
    QVERIFY(roundToFp16(65519.0f) == 65504.0f);
    QVERIFY(std::isinf(roundToFp16(65520.0f)) && std::isinf(roundToFp16(-7e4f)) && roundToFp16(-7e4f) < 0);
    QVERIFY(roundToFp16(std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));  // smallest subnormal
    QVERIFY(roundToFp16(std::ldexp(1.0f, -25)) == 0.0f);                   // tie to even: 0
    QVERIFY(roundToFp16(std::ldexp(1.5f, -25)) == std::ldexp(1.0f, -24));
    QVERIFY(roundToFp16(std::ldexp(1.3f, -15)) == std::ldexp(666.0f, -24));  // subnormal spacing 2^-24
    QVERIFY(roundToFp16(std::exp(-18.0f)) == 0.0f);  // exp(-18) < 2^-25: underflows, as on fp16 hardware
    QVERIFY(std::signbit(roundToFp16(-1e-30f)));     // keeps the sign of a flushed value
#ifdef __FLT16_MAX__
    // Against the compiler's own float -> _Float16 conversion over many magnitudes.
    Rng rng(4);
    int mismatches = 0;
    for (int n = 0; n < 200000; ++n) {
      const float x = static_cast<float>((rng.uniform() - 0.5) * std::ldexp(1.0, rng.uniformInt(-30, 17)));
      mismatches += roundToFp16(x) != static_cast<float>(static_cast<_Float16>(x));
    }
    QCOMPARE(mismatches, 0);
#endif
  }

  // The ALiBi underflow paper's failure: with ALiBi over a long context, fp16's exponentials underflow
  // and a share of the far weights becomes exactly zero; fp32 keeps every weight whose exponent it can
  // represent; the log-distance form penalises far keys so gently that it loses (almost) nothing.
  void alibiFarWeightsUnderflowInLowPrecision() {
    ModelConfig c;
    c.vocab = 16;
    c.d_model = 64;
    c.n_layers = 1;
    c.n_heads = 8;  // slopes 1/2, 1/4, ..., 1/256: head 0 the steepest
    c.attention_only = true;
    c.context = 512;
    std::vector<int> tokens(c.context);
    Rng rng(2);
    for (int& t : tokens) t = rng.uniformInt(0, c.vocab - 1);
    auto run = [&](const std::string& positional, const std::string& precision) {
      c.positional = positional;
      c.score_precision = precision;
      return traceOf(Model(c, 5), tokens).layers[0];
    };
    const LayerTrace fp32 = run("alibi", "fp32"), bf16 = run("alibi", "bf16"), fp16 = run("alibi", "fp16"),
                     logFp16 = run("alibi_log", "fp16");
    const std::vector<double> s32 = zeroShares(fp32), s16 = zeroShares(fp16), sBf = zeroShares(bf16), sLog = zeroShares(logFp16);
    qInfo("share of visible weights exactly 0 per head (slopes 1/2 .. 1/256), T = %d:", c.context);
    qInfo("  alibi fp32:     %s", qPrintable(sharesText(s32)));
    qInfo("  alibi bf16:     %s", qPrintable(sharesText(sBf)));
    qInfo("  alibi fp16:     %s", qPrintable(sharesText(s16)));
    qInfo("  alibi_log fp16: %s", qPrintable(sharesText(sLog)));

    const int T = c.context;
    double total16 = 0, total32 = 0, totalLog = 0;
    for (int h = 0; h < c.n_heads; ++h) {
      const double slope = alibiSlope(h, c.n_heads);
      int fp16KeptFar = 0, fp16LostNear = 0, fp32LostInRange = 0;
      double maxContent = 0;  // |q.k / sqrt(d)|: the score without its bias
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i; ++j) {
          const double penalty = slope * (i - j);
          maxContent = std::max(maxContent, std::abs(fp32.heads[h].scores(i, j) + penalty));
          // fp16: an exponential below 2^-25 (logit gap > 17.33) rounds to exactly zero; nearer keys keep weight.
          fp16KeptFar += penalty > 18.5 && fp16.heads[h].weights(i, j) != 0.0f;
          fp16LostNear += penalty < 16 && fp16.heads[h].weights(i, j) == 0.0f;
          // fp32 loses a weight only where exp leaves float32's own range (below 2^-149, a gap > 103.3).
          fp32LostInRange += penalty < 100 && fp32.heads[h].weights(i, j) == 0.0f;
        }
      QVERIFY2(maxContent < 0.5, "the margins below assume scores close to their bias");
      QCOMPARE(fp16KeptFar, 0);
      QCOMPARE(fp16LostNear, 0);
      QCOMPARE(fp32LostInRange, 0);
      total16 += s16[h];
      total32 += s32[h];
      totalLog += sLog[h];
      QVERIFY(sBf[h] >= s32[h] && s16[h] >= sBf[h]);
    }
    // Heads 2..7 never leave fp32's range at this length: fp32 has none, fp16 zeroes far weights in heads 2..3.
    for (int h = 2; h < c.n_heads; ++h) QVERIFY(s32[h] == 0.0);
    QVERIFY(s16[2] > 0.4 && s16[3] > 0.15);
    QVERIFY(total16 > 2 * total32);
    QVERIFY(totalLog < total16 / 10);
  }
};

QTEST_APPLESS_MAIN(TestVariantInvariants)
#include "test_variant_invariants.moc"
