// Gradient checks on sequences longer than the fast paths' blocks (kCausalRows, head_loops.h), for
// every attention variant the registry holds (under RoPE) and every positional encoding (under
// softmax), so the blocked causal backward is checked too; and checked entry by entry against a
// bound set from the float32 noise measured on that very entry.
//
// The noise: the central difference at step h and at h/2 differ by the finite-difference error
// (float32 rounding of the loss over the step, plus truncation), so |d(h) - d(h/2)| measures it per
// entry. Every entry must satisfy |analytic - d(h)| <= 4 |d(h) - d(h/2)| + 2e-4 (the floor is the
// rounding of a loss near 2 in float32, 2e-7, over the step), and each tensor's relative error must
// stay below 1e-3 (times kStep / h where a shorter step h was needed): the aggregate tolerance the
// engine's float32 noise allows, ten times below the 1e-2 of grad_check.h.
//
// The L1 score's |P q_i - P k_j| has kinks, and on 71 tokens some of its ~20,000 terms cross zero
// within many steps, where a central difference is not the derivative. For it the step is
// halved (down to 1/64) until no component of P_h (q_i - k_j) changes sign between w - h, w and
// w + h, read from the traces; the difference is then over one smooth piece, and the tensor
// tolerance grows as the loss's rounding over the shorter step does.
#include <QtTest>

#include <omp.h>

#include <cmath>

#include "attention/attention.h"
#include "attention/head_loops.h"
#include "positional/positional.h"
#include "grad_check.h"
#include "model/model.h"
#include "model/trace.h"

using namespace attnlab;

namespace {

constexpr int kLength = 2 * kCausalRows + 7;  // three causal blocks, the last one partial
constexpr float kStep = 4e-3f;

ModelConfig longConfig(const std::string& variant, const std::string& positional = "rope") {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 8;
  c.n_layers = 1;
  c.n_heads = 2;
  c.d_ff = 12;
  c.context = kLength;
  c.attention = {variant};
  c.positional = positional;
  if (variant == "window") c.attention_settings["window"] = 20;  // narrower than the sequence
  return c;
}

// The sign of every component of P_h (q_i - k_j), i >= j, over the layers and heads: the L1
// score's kinks lie where one of them changes.
std::vector<char> l1Signs(const Model& model, const testing::GradCheckCase& k) {
  auto ws = makeWorkspace();
  Trace trace;
  model.forward(*ws, k.tokens.data(), k.targets.data(), k.B, k.T, &trace);
  std::vector<char> signs;
  const ModelConfig& c = model.config();
  const int d = c.headDim();
  for (int l = 0; l < c.n_layers; ++l) {
    const Param* proj = model.params().find("blocks." + std::to_string(l) + ".attn.l1_proj");
    const int rank = proj->shape[1];
    for (int hd = 0; hd < c.n_heads; ++hd) {
      const Eigen::Map<const Mat> P(proj->value.row(hd).data(), rank, d);
      const HeadTrace& h = trace.layers[l].heads[hd];
      for (int i = 0; i < k.T; ++i)
        for (int j = 0; j <= i; ++j) {
          const Vec difference = P * (h.q.row(i) - h.k.row(j)).transpose();
          for (int r = 0; r < rank; ++r) signs.push_back(difference[r] > 0);
        }
    }
  }
  return signs;
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
    checkOnALongSequence(longConfig(variant.toStdString()), variant);
  }

  // Additive (ALiBi, learned and sinusoidal tables) and rotary encodings change the backward's
  // bias and input paths; each on the long sequence under softmax.
  void everyPositionalEncodingOnALongSequence_data() {
    QTest::addColumn<QString>("positional");
    for (const auto& entry : PositionalRegistry::instance().entries())
      QTest::newRow(entry.name.c_str()) << QString::fromStdString(entry.name);
  }
  void everyPositionalEncodingOnALongSequence() {
    QFETCH(QString, positional);
    // accumulated rotation sums t token angles at position t, so the loss curves fast in the
    // angle weights: the central difference's truncation error, falling fourfold per halving of
    // the step (measured: 9% of the gradient at the full step, 0.1% at an eighth), sets the step
    const float step = positional == "accumulated_rotation" ? kStep / 8 : kStep;
    checkOnALongSequence(longConfig("softmax", positional.toStdString()), "softmax + " + positional, step);
  }

 private:
  static void checkOnALongSequence(const ModelConfig& config, const QString& label, float step = kStep) {
    const std::string variant = config.attention.front();
    // Content-free variants do not read W_q, W_k: their gradient must be exactly zero instead.
    const bool contentFree = variant == "static_map" || variant == "no_mixing";
    const auto unread = [&](const std::string& name) {
      return contentFree && (name.find(".attn.wq.") != std::string::npos || name.find(".attn.wk.") != std::string::npos);
    };
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
    // the step: `step`, or for the L1 score the largest halving of it with no kink inside
    const bool kinked = variant == "l1_score";
    int shortened = 0;
    const auto stepFor = [&](float& w) {
      float h = step;
      if (!kinked) return h;
      const float saved = w;
      const std::vector<char> here = l1Signs(model, k);
      for (; h > step / 64; h /= 2) {
        w = saved + h;
        const bool same = l1Signs(model, k) == here;
        w = saved - h;
        const bool sameBelow = l1Signs(model, k) == here;
        w = saved;
        if (same && sameBelow) break;
      }
      shortened += h < step;
      return h;
    };

    double worstNoise = 0, worstRelative = 0;
    for (auto& p : model.params().all()) {
      if (unread(p->name)) {
        if (!p->grad.isZero(0)) QFAIL(qPrintable(label + ": " + QString::fromStdString(p->name) + " is not read but has a gradient"));
        continue;
      }
      const Eigen::Index n = p->value.size(), stride = std::max<Eigen::Index>(1, n / 24);
      double diff = 0, norm = 0;
      float shortest = step;
      for (Eigen::Index i = 0; i < n; i += stride) {
        float& w = p->value.data()[i];
        const float h = stepFor(w);
        shortest = std::min(shortest, h);
        const double numeric = difference(w, h), finer = difference(w, h / 2);
        const double noise = std::abs(numeric - finer), analytic = p->grad.data()[i];
        worstNoise = std::max(worstNoise, noise);
        // the floor: float32 rounding of the loss (2e-7) over the step
        if (!(std::abs(analytic - numeric) <= 4 * noise + 2e-4 * (kStep / h)))
          QFAIL(qPrintable(QString("%1: %2[%3]: analytic %4, numeric %5 (noise %6, step %7)")
                               .arg(label, QString::fromStdString(p->name))
                               .arg(i)
                               .arg(analytic, 0, 'g', 6)
                               .arg(numeric, 0, 'g', 6)
                               .arg(noise, 0, 'g', 3)
                               .arg(h, 0, 'g', 3)));
        diff += (numeric - analytic) * (numeric - analytic);
        norm += numeric * numeric + analytic * analytic;
      }
      const double relative = norm > 0 ? std::sqrt(diff / norm) : 1.0;
      worstRelative = std::max(worstRelative, relative);
      // the loss's float32 rounding over a step h is kStep / h times that over kStep
      const double tolerance = 1e-3 * kStep / shortest;
      if (!(relative < tolerance))
        QFAIL(qPrintable(QString("%1: %2: relative error %3 (tolerance %4)").arg(label, QString::fromStdString(p->name)).arg(relative).arg(tolerance)));
      if (!(norm > 1e-12)) QFAIL(qPrintable(label + ": gradient of " + QString::fromStdString(p->name) + " is zero"));
    }
    qInfo("%s: worst finite-difference noise %.2e, worst tensor relative error %.2e%s", qPrintable(label), worstNoise, worstRelative,
          kinked ? qPrintable(QString(", %1 entries checked at a shorter step").arg(shortened)) : "");
  }
};

QTEST_APPLESS_MAIN(TestLongSequenceGradients)
#include "test_long_sequence_gradients.moc"
