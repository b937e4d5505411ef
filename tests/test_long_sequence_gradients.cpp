// Gradient checks on sequences longer than the fast paths' blocks (kCausalRows, head_loops.h), for
// every attention variant the registry holds, so the blocked causal backward is checked too; and
// checked entry by entry against a bound set from the float32 noise measured on that very entry.
//
// The noise: the central difference at step h and at h/2 differ by the finite-difference error
// (float32 rounding of the loss over the step, plus truncation), so |d(h) - d(h/2)| measures it per
// entry. Every entry must satisfy |analytic - d(h)| <= 4 |d(h) - d(h/2)| + 2e-4 (the floor is the
// rounding of a loss near 2 in float32, 2e-7, over the step), and each tensor's relative error must
// stay below 1e-3: the aggregate tolerance the engine's float32 noise allows, ten times below the
// 1e-2 of grad_check.h.
#include <QtTest>

#include <omp.h>

#include <cmath>

#include "attention/attention.h"
#include "attention/head_loops.h"
#include "grad_check.h"
#include "model/model.h"

using namespace attnlab;

namespace {

constexpr int kLength = 2 * kCausalRows + 7;  // three causal blocks, the last one partial
constexpr float kStep = 4e-3f;

ModelConfig longConfig(const std::string& variant) {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 8;
  c.n_layers = 1;
  c.n_heads = 2;
  c.d_ff = 12;
  c.context = kLength;
  c.attention = {variant};
  c.positional = "rope";
  if (variant == "window") c.attention_settings["window"] = 20;  // narrower than the sequence
  return c;
}

}  // namespace

class TestLongSequenceGradients : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);  // tiny products: OpenMP's spinning threads only slow them down
    Eigen::setNbThreads(1);
    QVERIFY(kLength > 2 * kCausalRows);
  }

  void everyVariantOnALongSequence_data() {
    QTest::addColumn<QString>("variant");
    for (const auto& entry : AttentionRegistry::instance().entries())
      QTest::newRow(entry.name.c_str()) << QString::fromStdString(entry.name);
    QVERIFY(AttentionRegistry::instance().entries().size() >= 6);
  }
  void everyVariantOnALongSequence() {
    QFETCH(QString, variant);
    if (variant == "l1_score")  // visible as a skip, with the reason
      QSKIP("l1_score's |P q - P k| has kinks that central differences straddle on 71 tokens; its gradients are "
            "checked on short sequences in test_mechanism_variants");
    // Content-free variants do not read W_q, W_k: their gradient must be exactly zero instead.
    const bool contentFree = variant == "static_map" || variant == "no_mixing";
    const auto unread = [&](const std::string& name) {
      return contentFree && (name.find(".attn.wq.") != std::string::npos || name.find(".attn.wk.") != std::string::npos);
    };
    const ModelConfig config = longConfig(variant.toStdString());
    Model model(config, 7);
    testing::randomiseParams(model, 11);
    const testing::GradCheckCase k = testing::randomCase(config, 1, kLength, 3);
    auto ws = makeWorkspace();
    model.params().zeroGrad();
    model.forward(*ws, k.tokens.data(), k.targets.data(), k.B, k.T);
    model.backward(*ws);
    const auto loss = [&] { return model.forward(*ws, k.tokens.data(), k.targets.data(), k.B, k.T); };
    const auto difference = [&](float& w, float h) {
      const float saved = w;
      w = saved + h;
      const double up = loss();
      w = saved - h;
      const double down = loss();
      w = saved;
      return (up - down) / (2.0 * h);
    };

    double worstNoise = 0, worstRelative = 0;
    for (auto& p : model.params().all()) {
      if (unread(p->name)) {
        if (!p->grad.isZero(0)) QFAIL(qPrintable(variant + ": " + QString::fromStdString(p->name) + " is not read but has a gradient"));
        continue;
      }
      const Eigen::Index n = p->value.size(), stride = std::max<Eigen::Index>(1, n / 24);
      double diff = 0, norm = 0;
      for (Eigen::Index i = 0; i < n; i += stride) {
        float& w = p->value.data()[i];
        const double numeric = difference(w, kStep), finer = difference(w, kStep / 2);
        const double noise = std::abs(numeric - finer), analytic = p->grad.data()[i];
        worstNoise = std::max(worstNoise, noise);
        if (!(std::abs(analytic - numeric) <= 4 * noise + 2e-4))
          QFAIL(qPrintable(QString("%1: %2[%3]: analytic %4, numeric %5 (noise %6)")
                               .arg(variant, QString::fromStdString(p->name))
                               .arg(i)
                               .arg(analytic, 0, 'g', 6)
                               .arg(numeric, 0, 'g', 6)
                               .arg(noise, 0, 'g', 3)));
        diff += (numeric - analytic) * (numeric - analytic);
        norm += numeric * numeric + analytic * analytic;
      }
      const double relative = norm > 0 ? std::sqrt(diff / norm) : 1.0;
      worstRelative = std::max(worstRelative, relative);
      if (!(relative < 1e-3))
        QFAIL(qPrintable(QString("%1: %2: relative error %3").arg(variant, QString::fromStdString(p->name)).arg(relative)));
      if (!(norm > 1e-12)) QFAIL(qPrintable(variant + ": gradient of " + QString::fromStdString(p->name) + " is zero"));
    }
    qInfo("%s: worst finite-difference noise %.2e, worst tensor relative error %.2e", qPrintable(variant), worstNoise,
          worstRelative);
  }
};

QTEST_APPLESS_MAIN(TestLongSequenceGradients)
#include "test_long_sequence_gradients.moc"
