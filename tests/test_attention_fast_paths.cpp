// Each fast path equals the plain code it stands beside: the float32 masked softmax and its
// decoding row (attention/softmax_core.h), the causal block products (attention/head_loops.h), the blocked
// GELU (model/ops.cpp) and sigmoid attention's vectorised float32 rows, each against its plain reference.
#include <QtTest>

#include <cmath>
#include <limits>

#include "attention/attention.h"
#include "attention/softmax_core.h"
#include "core/params.h"
#include "core/random.h"
#include "model/ops.h"

using namespace attnlab;

namespace {
Mat randomMatrix(int rows, int cols, float stddev, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal(0.f, stddev);
  return m;
}

// Causal scores as causalScores() leaves them: -inf above the diagonal.
Mat causal(Mat s) {
  for (int i = 0; i < s.rows(); ++i)
    for (int j = i + 1; j < s.cols(); ++j) s(i, j) = -std::numeric_limits<float>::infinity();
  return s;
}
}  // namespace

class TestAttentionFastPaths : public QObject {
  Q_OBJECT

 private slots:
  void softmaxFp32EqualsPlain_data() {
    QTest::addColumn<int>("T");
    QTest::addColumn<int>("window");
    QTest::addColumn<float>("beta");
    QTest::newRow("full, T 37") << 37 << 0 << 1.0f;
    QTest::newRow("full, T 128, sharp") << 128 << 0 << 7.5f;
    QTest::newRow("window 5, T 40") << 40 << 5 << 1.3f;
  }
  void softmaxFp32EqualsPlain() {
    QFETCH(int, T);
    QFETCH(int, window);
    QFETCH(float, beta);
    const Mat scores = causal(randomMatrix(T, T, 3.0f, 11 + T));
    Mat sPlain = scores, sFast = scores, aPlain = Mat::Constant(T, T, 42.f), aFast = Mat::Constant(T, T, 42.f);
    maskedSoftmaxHeadPlain(HeadMat(sPlain.data(), T, T), HeadMat(aPlain.data(), T, T), beta, nullptr, window, ScorePrecision::fp32);
    maskedSoftmaxHead(HeadMat(sFast.data(), T, T), HeadMat(aFast.data(), T, T), beta, nullptr, window, ScorePrecision::fp32);
    QVERIFY(sFast == sPlain);  // the same masking, bit for bit
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const bool visible = j <= i && j >= firstVisibleKey(i, window);
        if (!visible) QCOMPARE(aFast(i, j), 0.0f);  // exactly zero where masked, like the plain path
        QVERIFY2(std::abs(aFast(i, j) - aPlain(i, j)) <= 1e-6f * std::max(1.0f, aPlain(i, j)),
                 qPrintable(QString("a(%1, %2): fast %3, plain %4").arg(i).arg(j).arg(aFast(i, j)).arg(aPlain(i, j))));
      }
  }

  void softmaxFp32KeepsSubnormalWeightsLikePlain() {
    const int T = 2;
    Mat scores = causal(Mat::Zero(T, T));
    scores(1, 1) = 95.0f;  // a(1, 0) = exp(-95): subnormal in float32, not 0
    Mat sPlain = scores, sFast = scores, aPlain(T, T), aFast(T, T);
    maskedSoftmaxHeadPlain(HeadMat(sPlain.data(), T, T), HeadMat(aPlain.data(), T, T), 1.0f, nullptr, 0, ScorePrecision::fp32);
    maskedSoftmaxHead(HeadMat(sFast.data(), T, T), HeadMat(aFast.data(), T, T), 1.0f, nullptr, 0, ScorePrecision::fp32);
    QVERIFY(aPlain(1, 0) > 0.0f);
    QCOMPARE(aFast(1, 0), aPlain(1, 0));
  }

  void softmaxFp32KeepsNaNAndEmptyRowsLikePlain() {
    const int T = 4;
    Mat scores = causal(randomMatrix(T, T, 1.0f, 5));
    scores(2, 1) = std::numeric_limits<float>::quiet_NaN();  // a NaN must reach the loss
    scores(3, 0) = scores(3, 1) = scores(3, 2) = scores(3, 3) = -std::numeric_limits<float>::infinity();  // nothing visible
    Mat s = scores, a(T, T);
    maskedSoftmaxHead(HeadMat(s.data(), T, T), HeadMat(a.data(), T, T), 1.0f, nullptr, 0, ScorePrecision::fp32);
    for (int j = 0; j <= 2; ++j) QVERIFY(std::isnan(a(2, j)));
    for (int j = 0; j < T; ++j) QCOMPARE(a(3, j), 0.0f);
    QVERIFY(std::abs(a.row(1).sum() - 1.0f) < 1e-6f);
  }

  // Softmax attention forward and backward through the causal block products against full
  // T x T products written plainly (T = 45: whole blocks of 32 and a partial one; 2 heads sharing
  // one K/V head, so the shared gradients accumulate).
  void softmaxDecodeRowFp32EqualsPlain_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("window");
    QTest::addColumn<bool>("bias");
    QTest::newRow("128 live keys") << 128 << 0 << false;
    QTest::newRow("37 keys, window 9, bias") << 37 << 9 << true;
    QTest::newRow("one key") << 1 << 0 << false;
    QTest::newRow("no key") << 0 << 0 << false;
  }
  void softmaxDecodeRowFp32EqualsPlain() {
    QFETCH(int, n);
    QFETCH(int, window);
    QFETCH(bool, bias);
    const int dHead = 32;
    const Mat q = randomMatrix(1, dHead, 1.0f, 3), k = randomMatrix(std::max(n, 1), dHead, 1.0f, 4),
              v = randomMatrix(std::max(n, 1), dHead, 1.0f, 5), b = randomMatrix(1, std::max(n, 1), 2.0f, 6);
    std::vector<int> positions(n);
    for (int j = 0; j < n; ++j) positions[j] = 3 * j;  // live entries after some evictions
    DecodeRowInputs in;
    in.q = q.data();
    in.k = k.data();
    in.v = v.data();
    in.key_positions = positions.data();
    in.bias = bias ? b.data() : nullptr;
    in.n = n;
    in.dHead = dHead;
    in.query_position = n ? positions.back() : 0;
    in.scale = 1.0f / std::sqrt(float(dHead));
    std::vector<float> oPlain(dHead, 42.f), oFast(dHead, 42.f), wPlain(n, 42.f), wFast(n, 42.f);
    softmaxDecodeRowPlain(in, 1.7f, window, oPlain.data(), wPlain.data());
    softmaxDecodeRow(in, 1.7f, window, oFast.data(), wFast.data());
    for (int j = 0; j < n; ++j) {
      if (positions[j] < firstVisibleKey(in.query_position, window)) QCOMPARE(wFast[j], 0.0f);  // masked: exactly zero
      QVERIFY2(std::abs(wFast[j] - wPlain[j]) <= 1e-6f * std::max(1.0f, wPlain[j]),
               qPrintable(QString("w[%1]: fast %2, plain %3").arg(j).arg(wFast[j]).arg(wPlain[j])));
    }
    for (int d = 0; d < dHead; ++d)
      QVERIFY2(std::abs(oFast[d] - oPlain[d]) <= 1e-5f * std::max(1.0f, std::abs(oPlain[d])),
               qPrintable(QString("o[%1]: fast %2, plain %3").arg(d).arg(oFast[d]).arg(oPlain[d])));
  }

  void softmaxDecodeRowFp32KeepsNaNLikePlain() {
    const float q[2] = {std::numeric_limits<float>::quiet_NaN(), 1.0f}, k[4] = {1, 0, 0, 1}, v[4] = {1, 2, 3, 4};
    const int positions[2] = {0, 1};
    DecodeRowInputs in;
    in.q = q;
    in.k = k;
    in.v = v;
    in.key_positions = positions;
    in.n = 2;
    in.dHead = 2;
    in.query_position = 1;
    float o[2], w[2];
    softmaxDecodeRow(in, 1.0f, 0, o, w);
    QVERIFY(std::isnan(w[0]) && std::isnan(w[1]) && std::isnan(o[0]));  // the NaN reaches the logits, as in the plain path
  }

  void causalBlocksEqualFullProducts() {
    const int T = 45, dHead = 8, H = 2;
    const AttentionShape shape{1, T, H, 1, dHead};
    const Mat q = randomMatrix(H * T, dHead, 1.0f, 21), k = randomMatrix(T, dHead, 1.0f, 22), v = randomMatrix(T, dHead, 1.0f, 23);
    const Mat dO = randomMatrix(H * T, dHead, 1.0f, 24);
    const float scale = 1.0f / std::sqrt(float(dHead)), beta = 1.5f;
    Mat o(H * T, dHead), scores(H * T, T), weights(H * T, T), dQ(H * T, dHead), dK(T, dHead), dV(T, dHead);
    AttentionInputs in;
    in.shape = shape;
    in.q = q.data();
    in.k = k.data();
    in.v = v.data();
    in.scale = scale;
    AttentionOutputs out{o.data(), scores.data(), weights.data()};
    softmaxAttentionForward(in, out, beta, 0);
    AttentionGrads grads{dO.data(), dQ.data(), dK.data(), dV.data(), nullptr};
    softmaxAttentionBackward(in, out, grads, beta);

    Mat dKRef = Mat::Zero(T, dHead), dVRef = Mat::Zero(T, dHead);
    for (int h = 0; h < H; ++h) {
      const Mat Q = q.middleRows(h * T, T), G = dO.middleRows(h * T, T);
      Mat S = causal(scale * Q * k.transpose()), A = Mat::Zero(T, T);
      for (int i = 0; i < T; ++i) {
        const Eigen::ArrayXf e = (beta * S.row(i).head(i + 1).array() - beta * S.row(i).head(i + 1).maxCoeff()).exp();
        A.row(i).head(i + 1) = (e / e.sum()).matrix().transpose();
      }
      const Mat dA = G * v.transpose();
      const Eigen::ArrayXf rowDot = (A.array() * dA.array()).rowwise().sum();
      const Mat dS = beta * (A.array() * (dA.array().colwise() - rowDot)).matrix();
      const auto near = [](const Mat& got, const Mat& want, const char* what) {
        const float err = (got - want).cwiseAbs().maxCoeff();
        QVERIFY2(err <= 2e-5f * std::max(1.0f, want.cwiseAbs().maxCoeff()), qPrintable(QString("%1: %2").arg(what).arg(err)));
      };
      near(scores.middleRows(h * T, T).triangularView<Eigen::Lower>().toDenseMatrix(),
           S.triangularView<Eigen::Lower>().toDenseMatrix(), "scores");
      for (int i = 0; i < T; ++i)
        for (int j = i + 1; j < T; ++j) QVERIFY(std::isinf(scores(h * T + i, j)) && scores(h * T + i, j) < 0);
      near(weights.middleRows(h * T, T), A, "weights");
      near(o.middleRows(h * T, T), A * v, "o");
      near(dQ.middleRows(h * T, T), scale * dS * k, "dq");
      dKRef += scale * dS.transpose() * Q;
      dVRef += A.transpose() * G;
    }
    const float errK = (dK - dKRef).cwiseAbs().maxCoeff(), errV = (dV - dVRef).cwiseAbs().maxCoeff();
    QVERIFY2(errK <= 2e-5f && errV <= 2e-5f, qPrintable(QString("dk %1, dv %2").arg(errK).arg(errV)));
  }

  void blockedGeluEqualsFormula() {
    const Mat x = randomMatrix(3, 700, 2.0f, 3);  // 2100 values: whole blocks and a partial one
    const Mat dy = randomMatrix(3, 700, 1.0f, 4);
    Mat y, dx;
    ops::geluForward(x, y);
    ops::geluBackward(dy, x, dx);
    const double c = std::sqrt(2.0 / M_PI);
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const double v = x.data()[i], t = std::tanh(c * (v + 0.044715 * v * v * v));
      const double yRef = 0.5 * v * (1 + t);
      const double dxRef = dy.data()[i] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * c * (1 + 3 * 0.044715 * v * v));
      QVERIFY2(std::abs(y.data()[i] - yRef) <= 1e-5 * std::max(1.0, std::abs(yRef)), qPrintable(QString::number(i)));
      QVERIFY2(std::abs(dx.data()[i] - dxRef) <= 1e-5 * std::max(1.0, std::abs(dxRef)), qPrintable(QString::number(i)));
    }
  }

  // Sigmoid attention without a key gate runs vectorised float32 rows (forward, and a backward
  // reading the saved weights); a gate of ones takes the plain per-element path to the same numbers.
  void sigmoidFp32EqualsPlain_data() {
    QTest::addColumn<bool>("learnedBias");
    QTest::newRow("b = -log(i + 1)") << false;
    QTest::newRow("learned b") << true;
  }
  void sigmoidFp32EqualsPlain() {
    QFETCH(bool, learnedBias);
    const AttentionShape shape{2, 37, 2, 2, 8};
    ModelConfig config;
    config.attention_settings["temperature"] = 1.7;
    config.attention_settings["sigmoid_bias_learned"] = learnedBias ? 1 : 0;
    config.context = shape.T;
    ParamStore params;
    auto variant = AttentionRegistry::instance().create("sigmoid");
    QVERIFY(variant->configure(config, "blocks.0.attn.", params).empty());
    Rng rng(3);
    variant->initialise(rng);
    const Mat q = randomMatrix(1, static_cast<int>(shape.qSize()), 1.5f, 21), k = randomMatrix(1, static_cast<int>(shape.kvSize()), 1.5f, 22);
    const Mat v = randomMatrix(1, static_cast<int>(shape.kvSize()), 1.0f, 23), dO = randomMatrix(1, static_cast<int>(shape.qSize()), 1.0f, 24);
    const std::vector<float> ones(static_cast<size_t>(shape.B) * shape.H * shape.T, 1.0f);
    std::vector<int> positions(shape.T);
    for (int t = 0; t < shape.T; ++t) positions[t] = t;
    struct Run {
      std::vector<float> o, scores, weights, dq, dk, dv, dGate;
      Mat biasGrad;
    };
    auto run = [&](const float* gate) {
      Run r{std::vector<float>(shape.qSize()), std::vector<float>(shape.mapSize()), std::vector<float>(shape.mapSize()),
            std::vector<float>(shape.qSize()), std::vector<float>(shape.kvSize()), std::vector<float>(shape.kvSize()),
            std::vector<float>(ones.size()), Mat()};
      const AttentionInputs in{shape, q.data(), k.data(), v.data(), positions.data(), nullptr, gate, 1.0f / std::sqrt(8.0f), ScorePrecision::fp32};
      AttentionOutputs out{r.o.data(), r.scores.data(), r.weights.data()};
      variant->forward(in, out);
      for (auto& p : params.all()) p->grad.setZero();
      AttentionGrads g{dO.data(), r.dq.data(), r.dk.data(), r.dv.data(), gate ? r.dGate.data() : nullptr};
      variant->backward(in, out, g);
      if (learnedBias) r.biasGrad = params.all().front()->grad;
      return r;
    };
    const Run fast = run(nullptr), plain = run(ones.data());
    auto near = [](const std::vector<float>& a, const std::vector<float>& b, const char* what) {
      for (size_t i = 0; i < a.size(); ++i)
        QVERIFY2(std::abs(a[i] - b[i]) <= 2e-6f * std::max(1.0f, std::abs(b[i])),
                 qPrintable(QString("%1[%2]: fast %3, plain %4").arg(what).arg(i).arg(a[i]).arg(b[i])));
    };
    near(fast.weights, plain.weights, "weights");
    near(fast.o, plain.o, "o");
    near(fast.dq, plain.dq, "dq");
    near(fast.dk, plain.dk, "dk");
    near(fast.dv, plain.dv, "dv");
    if (learnedBias) QVERIFY2((fast.biasGrad - plain.biasGrad).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, plain.biasGrad.cwiseAbs().maxCoeff()), "bias gradient");
  }
};

QTEST_APPLESS_MAIN(TestAttentionFastPaths)
#include "test_attention_fast_paths.moc"
