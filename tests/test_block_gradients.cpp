// The building blocks pretrained models bring (model/block_parts.h, RoPE frequency rules, linear
// biases, parallel residual): every parameter's gradient against finite differences, the new ops
// against their formulas, and cached decoding equal to the full forward for models built of them.
#include <QtTest>

#include <cmath>

#include "grad_check.h"
#include "kv/decoder.h"
#include "model/block_ops.h"
#include "model/model.h"
#include "model/workspace.h"

using namespace attnlab;

namespace {

ModelConfig small() {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 2;
  c.d_ff = 12;
  c.context = 12;
  c.positional = "rope";
  return c;
}

// The option strings the data rows name, applied to a config.
ModelConfig withOptions(const QString& options) {
  ModelConfig c = small();
  for (const QString& o : options.split(',', Qt::SkipEmptyParts)) {
    if (o == "rmsnorm" || o == "layernorm_no_bias") c.norm = o.toStdString();
    if (o == "gelu_erf" || o == "swiglu") c.mlp = o.toStdString();
    if (o == "no_mlp_bias") c.mlp_bias = false;
    if (o == "qkv_bias") c.qkv_bias = true;
    if (o == "out_bias") c.out_bias = true;
    if (o == "parallel") c.parallel_residual = true;
    if (o == "gqa") {
      c.n_heads = 4;
      c.n_kv_heads = 2;
    }
    if (o == "q=k_v") c.projection_sharing = "q=k_v";
    if (o == "untied") c.tied_embeddings = false;
    if (o == "learned") c.positional = "learned";
    if (o == "partial_span") {  // GPT-NeoX: a quarter of each head rotates, frequencies over those dims
      c.positional_settings["rotary_fraction"] = 0.5;
      c.positional_settings["span_rotary_only"] = 1;
    }
    if (o == "llama3") {
      c.positional_settings["theta"] = 500;
      c.positional_settings["llama3_factor"] = 8;
      c.positional_settings["llama3_original_context"] = 64;
    }
    if (o == "linear_scale") c.positional_settings["linear_scale"] = 4;
  }
  return c;
}

void addBlockRows() {
  QTest::addColumn<QString>("options");
  for (const char* row : {"rmsnorm", "layernorm_no_bias", "gelu_erf", "swiglu", "swiglu,no_mlp_bias", "qkv_bias,out_bias",
                          "qkv_bias,q=k_v", "parallel", "parallel,partial_span,gelu_erf,qkv_bias,out_bias,untied",
                          "rmsnorm,swiglu,no_mlp_bias,gqa,llama3,untied", "rmsnorm,swiglu,no_mlp_bias,gqa,qkv_bias,linear_scale",
                          "learned,out_bias"})  // (without rotation a key bias adds the same q.b to a row's scores: no gradient)
    QTest::newRow(row) << row;
}

Mat randomMat(int rows, int cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal(0.f, 1.f);
  return m;
}

}  // namespace

class TestBlockGradients : public QObject {
  Q_OBJECT

 private slots:
  void gradientsMatchFiniteDifferences_data() { addBlockRows(); }
  void gradientsMatchFiniteDifferences() {
    QFETCH(QString, options);
    const ModelConfig c = withOptions(options);
    Model model(c, 5);
    testing::randomiseParams(model, 13);
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), options.toStdString());
  }

  void decodeEqualsForward_data() { addBlockRows(); }
  void decodeEqualsForward() {
    QFETCH(QString, options);
    const ModelConfig c = withOptions(options);
    Model model(c, 5);
    testing::randomiseParams(model, 13, 0.3f);
    const std::vector<int> tokens = {1, 4, 2, 6, 0, 3, 3, 5, 2, 1, 4, 4};
    auto ws = makeWorkspace();
    const std::vector<int> targets(tokens.size(), -1);
    model.forward(*ws, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()));
    const Mat full = workspaceLogits(*ws);
    Decoder decoder(model, makeEvictionPolicy("full", {}, c), "full", Budget{});
    double worst = 0;
    for (size_t t = 0; t < tokens.size(); ++t)
      worst = std::max(worst, static_cast<double>((decoder.step(tokens[t]) - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
    QVERIFY2(worst / std::max(1.0f, full.cwiseAbs().maxCoeff()) < 2e-5, qPrintable(QString("relative error %1").arg(worst)));
  }

  // The ops against their definitions at a few points.
  void opsMatchTheirFormulas() {
    const Mat x = randomMat(3, 5, 1), w = randomMat(1, 5, 2);
    Mat y, g;
    Vec rstd;
    ops::rmsNormForward(x, w, y, rstd, 1e-6f);
    for (int n = 0; n < 3; ++n) {
      const double ms = x.row(n).squaredNorm() / 5.0;
      for (int i = 0; i < 5; ++i) QVERIFY(std::abs(y(n, i) - x(n, i) / std::sqrt(ms + 1e-6) * w(0, i)) < 1e-5);
    }
    ops::geluErfForward(x, y);
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const double v = x.data()[i];
      QVERIFY(std::abs(y.data()[i] - 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))) < 1e-6);
    }
    const Mat u = randomMat(3, 5, 3);
    ops::swigluForward(x, u, y);
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const double v = x.data()[i];
      QVERIFY(std::abs(y.data()[i] - v / (1 + std::exp(-v)) * u.data()[i]) < 1e-5);
    }
  }

  // The element-wise backwards against central differences of their forwards.
  void opBackwardsMatchFiniteDifferences() {
    Mat x = randomMat(2, 6, 4), u = randomMat(2, 6, 5), w = randomMat(1, 6, 6);
    const Mat dy = randomMat(2, 6, 7);
    auto dot = [&](const Mat& y) { return static_cast<double>(y.cwiseProduct(dy).sum()); };
    Mat y, dx, du, dw = Mat::Zero(1, 6);
    Vec rstd;
    auto rms = [&] { ops::rmsNormForward(x, w, y, rstd, 1e-5f); return dot(y); };
    auto erf = [&] { ops::geluErfForward(x, y); return dot(y); };
    auto glu = [&] { ops::swigluForward(x, u, y); return dot(y); };
    std::vector<float> xs(x.data(), x.data() + x.size());
    auto check = [&](const std::function<double()>& f, const Mat& analytic, const char* what) {
      std::vector<float> a(analytic.data(), analytic.data() + analytic.size());
      const double rel = testing::relativeError(xs, a, [&] { std::copy(xs.begin(), xs.end(), x.data()); return f(); });
      std::copy(xs.begin(), xs.end(), x.data());
      QVERIFY2(rel < 1e-2, qPrintable(QString("%1: relative error %2").arg(what).arg(rel)));
    };
    rms();
    dx.setZero(2, 6);
    ops::rmsNormBackward(dy, x, w, rstd, dx, dw);
    check(rms, dx, "rmsnorm");
    ops::geluErfBackward(dy, x, dx);
    check(erf, dx, "gelu_erf");
    Mat dg;
    ops::swigluBackward(dy, x, u, dg, du);
    check(glu, dg, "swiglu gate");
  }

  void unknownKindsAreRefused() {
    for (auto [field, value] : {std::pair{"norm", "batchnorm"}, {"mlp", "relu2"}}) {
      ModelConfig c = small();
      (std::string(field) == "norm" ? c.norm : c.mlp) = value;
      try {
        Model model(c, 1);
        QFAIL("expected a refusal");
      } catch (const std::invalid_argument& e) {
        QVERIFY2(QString(e.what()).contains(value), e.what());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestBlockGradients)
#include "test_block_gradients.moc"
