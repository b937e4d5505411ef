// AdamW and gradient clipping against values worked out by hand: bias correction over two steps,
// decoupled decay applied only where Param::decay is set (matrices, never norms or biases), an
// exactly zero gradient, and clipping of the global norm.
#include <QtTest>

#include <cmath>

#include "model/model.h"
#include "train/optimizer.h"

using namespace attnlab;

namespace {

TrainConfig handConfig() {
  TrainConfig c;
  c.beta1 = 0.9;
  c.beta2 = 0.98;
  c.eps = 1e-8;
  c.weight_decay = 0.1;
  return c;
}

void setRow(Mat& m, std::initializer_list<float> values) {
  int i = 0;
  for (float v : values) m(i / m.cols(), i % m.cols()) = v, ++i;
}

void expectValues(const Mat& m, std::initializer_list<double> expected) {
  int i = 0;
  for (double e : expected) {
    const float got = m(i / m.cols(), i % m.cols());
    if (std::abs(got - e) > 2e-6 * std::max(1.0, std::abs(e)))
      QFAIL(qPrintable(QString("entry %1: got %2, expected %3").arg(i).arg(got, 0, 'g', 9).arg(e, 0, 'g', 9)));
    ++i;
  }
}

}  // namespace

class TestOptimizer : public QObject {
  Q_OBJECT
 private slots:
  // Step 1: m = 0.1 g, v = 0.02 g^2; bias correction divides by 0.1 and 0.02, so the update is
  // lr * g / |g| = lr * sign(g) (and 0 for g = 0). Decay first scales w by 1 - lr * wd = 0.999.
  // Step 2 (lr 0.02): m = 0.09 g1 + 0.1 g2, v = 0.0196 g1^2 + 0.02 g2^2, corrected by
  // 1 - 0.9^2 = 0.19 and 1 - 0.98^2 = 0.0396; decay scales by 0.998. E.g. entry 0:
  // m = -0.055, v = 0.0249, w = 0.989 * 0.998 - 0.02 * (-0.055 / 0.19) / sqrt(0.0249 / 0.0396)
  //   = 0.987022 + 0.0073011 = 0.9943231.
  void twoStepsMatchTheHandComputedValues() {
    ParamStore params;
    Param& w = params.add("w", {2, 2}, true);
    Param& b = params.add("b", {2}, false);
    setRow(w.value, {1.0f, -2.0f, 0.5f, 3.0f});
    setRow(b.value, {0.25f, -1.5f});
    AdamW adam(params, handConfig());

    setRow(w.grad, {0.5f, -0.25f, 2.0f, 0.0f});
    setRow(b.grad, {0.5f, -0.25f});
    adam.step(0.01);
    QCOMPARE(adam.steps(), 1);
    expectValues(w.value, {0.989, -1.988, 0.4895, 2.997});  // 0.999 w - 0.01 sign(g); g = 0 only decays
    expectValues(b.value, {0.24, -1.49});                     // no decay: w - 0.01 sign(g)

    setRow(w.grad, {-1.0f, 0.5f, 1.0f, 4.0f});
    setRow(b.grad, {-1.0f, 0.5f});
    adam.step(0.02);
    QCOMPARE(adam.steps(), 2);
    expectValues(w.value, {0.994323078, -1.991325078, 0.469823460, 2.976194161});
    expectValues(b.value, {0.247301078, -1.497301078});
  }

  // A zero learning rate leaves every value exactly as it was, decay included.
  void aZeroLearningRateChangesNothing() {
    ParamStore params;
    Param& w = params.add("w", {1, 3}, true);
    setRow(w.value, {1.0f, 2.0f, 3.0f});
    setRow(w.grad, {1.0f, -1.0f, 0.5f});
    AdamW adam(params, handConfig());
    adam.step(0.0);
    expectValues(w.value, {1.0, 2.0, 3.0});
  }

  // The model marks decay on its weight matrices and embeddings only: every 1-D parameter (norm
  // gains, biases) is exempt, as AdamW's decoupled decay is meant to be used.
  void theModelDecaysMatricesOnly() {
    ModelConfig config;
    config.vocab = 11;
    config.d_model = 16;
    config.n_layers = 2;
    config.n_heads = 2;
    config.d_ff = 32;
    config.context = 8;
    Model model(config, 1);
    int matrices = 0;
    for (const auto& p : model.params().all()) {
      QVERIFY2(p->decay == (p->shape.size() >= 2), qPrintable(QString::fromStdString(p->name)));
      matrices += p->decay;
    }
    QVERIFY(matrices > 0);
  }

  // Gradients (3, 4) have norm 5: clipped to 1 they become (0.6, 0.8) and the norm before is returned.
  void clippingScalesTheGlobalNorm() {
    ParamStore params;
    Param& a = params.add("a", {1, 1});
    Param& b = params.add("b", {1});
    a.grad(0, 0) = 3.0f;
    b.grad(0, 0) = 4.0f;
    QCOMPARE(gradientNorm(params), 5.0);
    QCOMPARE(clipGradients(params, 1.0), 5.0);
    QVERIFY(std::abs(a.grad(0, 0) - 0.6f) < 1e-6f);
    QVERIFY(std::abs(b.grad(0, 0) - 0.8f) < 1e-6f);
    QVERIFY(std::abs(gradientNorm(params) - 1.0) < 1e-6);
  }

  // Below the limit, and with clipping off (0), gradients are left exactly as they are.
  void clippingLeavesSmallNormsAndZeroLimitAlone() {
    ParamStore params;
    Param& a = params.add("a", {1, 2});
    setRow(a.grad, {0.3f, 0.4f});
    QCOMPARE(clipGradients(params, 1.0), gradientNorm(params));
    QCOMPARE(a.grad(0, 0), 0.3f);
    setRow(a.grad, {30.0f, 40.0f});
    QCOMPARE(clipGradients(params, 0.0), 50.0);
    QCOMPARE(a.grad(0, 1), 40.0f);
  }
};

QTEST_APPLESS_MAIN(TestOptimizer)
#include "test_optimizer.moc"
