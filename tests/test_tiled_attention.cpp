// Attention without T x T maps (attention/softmax_tiled.h): for every registered variant that says
// it can (attendsWithoutMaps), a forward and backward without maps give the outputs and gradients
// of the same variant with maps to 1e-5, and row figures (log-sum-exp, entropy, largest score)
// equal to those read off the maps; on sequences of several tiles, the last partial, with grouped
// heads, a positional bias and a window narrower than a tile. Through the model, gradients of
// a pass without maps match finite differences, and a training step's loss, entropy and largest
// score match a pass that kept its maps.
#include <QtTest>

#include <cmath>
#include <limits>

#include "attention/attention.h"
#include "attention/softmax_tiled.h"
#include "grad_check.h"
#include "model/model.h"
#include "model/workspace.h"
#include "train/qk_guard.h"

using namespace attnlab;

namespace {

constexpr int kT = 2 * kTileRows + 21;  // three query tiles, the last partial

struct Inputs {
  AttentionShape shape{2, kT, 4, 2, 8};  // grouped heads: two query heads per KV head
  std::vector<float> q, k, v, bias, dO;
  std::vector<int> positions;
};

Inputs randomInputs(uint64_t seed, bool withBias) {
  Rng rng(seed);
  Inputs x;
  x.q = testing::randomVector(x.shape.qSize(), rng, -1.5f, 1.5f);
  x.k = testing::randomVector(x.shape.kvSize(), rng, -1.5f, 1.5f);
  x.v = testing::randomVector(x.shape.kvSize(), rng, -1.0f, 1.0f);
  x.dO = testing::randomVector(x.shape.qSize(), rng, -1.0f, 1.0f);
  if (withBias) x.bias = testing::randomVector(static_cast<size_t>(x.shape.H) * kT * kT, rng, -2.0f, 0.0f);
  for (int t = 0; t < kT; ++t) x.positions.push_back(t);
  return x;
}

AttentionInputs inputsOf(const Inputs& x) {
  return {x.shape, x.q.data(), x.k.data(), x.v.data(), x.positions.data(), x.bias.empty() ? nullptr : x.bias.data(), nullptr,
          1.0f / std::sqrt(8.0f), ScorePrecision::fp32};
}

float worstDifference(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Every variant that attends without maps, with settings that make its masking matter.
std::vector<std::pair<std::string, std::unique_ptr<AttentionVariant>>> variantsWithoutMaps() {
  std::vector<std::pair<std::string, std::unique_ptr<AttentionVariant>>> out;
  const Inputs probe = randomInputs(1, false);
  for (const auto& entry : AttentionRegistry::instance().entries()) {
    ModelConfig c;
    c.attention_settings["window"] = 23;      // narrower than a tile, so tiles are partly masked
    c.attention_settings["temperature"] = 1.7;  // a non-default beta
    auto variant = entry.make();
    ParamStore params;
    try {
      if (!variant->configure(c, "blocks.0.attn.", params).empty()) continue;
    } catch (const std::exception&) {
      continue;  // a variant that needs a fuller configuration than this one cannot claim the path here
    }
    if (variant->attendsWithoutMaps(inputsOf(probe))) out.emplace_back(entry.name, std::move(variant));
  }
  return out;
}

}  // namespace

class TestTiledAttention : public QObject {
  Q_OBJECT

 private slots:
  void softmaxAndWindowAttendWithoutMaps() {
    QStringList names;
    for (const auto& [name, variant] : variantsWithoutMaps()) names << QString::fromStdString(name);
    QVERIFY2(names.contains("softmax") && names.contains("window"), qPrintable(names.join(", ")));
  }

  void withoutMapsEqualsWithMaps() {
    for (const auto& [name, variant] : variantsWithoutMaps())
      for (bool withBias : {false, true}) {
        const QString label = QString::fromStdString(name) + (withBias ? " with bias" : "");
        const Inputs x = randomInputs(11, withBias);
        const AttentionInputs in = inputsOf(x);
        const size_t rows = static_cast<size_t>(x.shape.B) * x.shape.H * kT;
        std::vector<float> oMaps(x.shape.qSize()), scores(x.shape.mapSize()), weights(x.shape.mapSize());
        AttentionOutputs withMaps{oMaps.data(), scores.data(), weights.data()};
        variant->forward(in, withMaps);
        std::vector<float> oTiled(x.shape.qSize()), lse(rows), entropy(rows), largest(rows);
        AttentionOutputs tiled{oTiled.data(), nullptr, nullptr, lse.data(), entropy.data(), largest.data()};
        variant->forward(in, tiled);
        QVERIFY2(worstDifference(oMaps, oTiled) < 1e-5f, qPrintable(label + ": outputs differ by " + QString::number(worstDifference(oMaps, oTiled))));

        // Row figures against the maps: L_i from the scores (softmax's logits are beta s), H_i and max |s| from them.
        for (size_t r = 0; r < rows; ++r) {
          const float* a = weights.data() + r * kT;
          const float* s = scores.data() + r * kT;
          double h = 0, big = 0;
          for (int j = 0; j < kT; ++j) {
            if (a[j] > 0) h -= a[j] * std::log(a[j]);
            if (std::isfinite(s[j])) big = std::max(big, std::abs(static_cast<double>(s[j])));
          }
          QVERIFY2(std::abs(entropy[r] - h) < 1e-4, qPrintable(label + ": entropy of row " + QString::number(r)));
          QVERIFY2(std::abs(largest[r] - big) < 1e-5, qPrintable(label + ": largest score of row " + QString::number(r)));
          // a_ij = exp(beta s_ij - L_i) at the row's most weighted key
          const int j = static_cast<int>(std::max_element(a, a + kT) - a);
          QVERIFY2(std::abs(std::exp(1.7 * s[j] - lse[r]) - a[j]) < 1e-5, qPrintable(label + ": log-sum-exp of row " + QString::number(r)));
        }

        AttentionGrads gMaps{x.dO.data()}, gTiled{x.dO.data()};
        std::vector<float> dq1(x.shape.qSize()), dk1(x.shape.kvSize()), dv1(x.shape.kvSize());
        std::vector<float> dq2(x.shape.qSize(), 9.0f), dk2(x.shape.kvSize(), 9.0f), dv2(x.shape.kvSize(), 9.0f);  // stale values must be overwritten
        gMaps.d_q = dq1.data(), gMaps.d_k = dk1.data(), gMaps.d_v = dv1.data();
        gTiled.d_q = dq2.data(), gTiled.d_k = dk2.data(), gTiled.d_v = dv2.data();
        variant->backward(in, withMaps, gMaps);
        variant->backward(in, tiled, gTiled);
        for (auto [a, b, what] : {std::tuple{&dq1, &dq2, "d_q"}, {&dk1, &dk2, "d_k"}, {&dv1, &dv2, "d_v"}})
          QVERIFY2(worstDifference(*a, *b) < 1e-5f,
                   qPrintable(label + ": " + what + " differs by " + QString::number(worstDifference(*a, *b))));
      }
  }

  // A NaN in one query reaches that row's output and log-sum-exp (and so the loss), and no other row.
  void aNanQueryReachesItsRowOnly() {
    for (const auto& [name, variant] : variantsWithoutMaps()) {
      Inputs x = randomInputs(13, false);
      const int row = kTileRows + 6;  // in the second query tile, past a whole block of keys
      x.q[static_cast<size_t>(row) * x.shape.dHead] = std::numeric_limits<float>::quiet_NaN();  // batch 0, head 0
      const size_t rows = static_cast<size_t>(x.shape.B) * x.shape.H * kT;
      std::vector<float> o(x.shape.qSize()), lse(rows), entropy(rows), largest(rows);
      AttentionOutputs out{o.data(), nullptr, nullptr, lse.data(), entropy.data(), largest.data()};
      variant->forward(inputsOf(x), out);
      const QString label = QString::fromStdString(name);
      QVERIFY2(std::isnan(lse[row]) && std::isnan(o[static_cast<size_t>(row) * x.shape.dHead]), qPrintable(label));
      for (size_t r = 0; r < rows; ++r)
        if (r != static_cast<size_t>(row)) QVERIFY2(std::isfinite(lse[r]), qPrintable(label + ": row " + QString::number(r)));
    }
  }

  // Finite differences of the model's loss through layers that attend without maps: the layer's
  // plumbing (row figures saved for the backward) and the tiled backward together.
  void gradientsWithoutMapsMatchFiniteDifferences() {
    for (const std::string attention : {"softmax", "window"}) {
      ModelConfig c = testing::gradCheckConfig(attention, "rope");
      c.n_layers = 1;
      c.context = kT;
      c.attention_settings["window"] = 23;
      auto model = testing::randomisedModel(c);
      testing::GradCheckCase k = testing::randomCase(c, 1, kT, 5);
      k.keep_attention_maps = false;
      testing::checkGradients(*model, k, attention + " without maps", 1e-2, 30);
    }
  }

  void aTrainingPassKeepsNoMapsAndReadsTheSameFigures() {
    ModelConfig c = testing::smallConfig("softmax", "learned", 9, kT);
    auto model = testing::randomisedModel(c);
    const testing::GradCheckCase k = testing::randomCase(c, 2, kT, 9);
    auto withMaps = makeWorkspace(), without = makeWorkspace();
    without->keep_attention_maps = false;
    const double lossMaps = model->forward(*withMaps, k.tokens.data(), k.targets.data(), k.B, k.T);
    const double lossTiled = model->forward(*without, k.tokens.data(), k.targets.data(), k.B, k.T);
    QVERIFY2(std::abs(lossMaps - lossTiled) < 1e-5, qPrintable(QString::number(lossMaps - lossTiled)));
    for (const BlockActs& block : without->blocks) {
      QVERIFY(block.attn.attended_without_maps);
      QCOMPARE(block.attn.scores.capacity() + block.attn.weights.capacity(), size_t{0});
    }
    const std::vector<double> entropyMaps = model->layerEntropy(*withMaps), entropyTiled = model->layerEntropy(*without);
    const std::vector<double> largestMaps = layerMaxScores(*withMaps), largestTiled = layerMaxScores(*without);
    for (int l = 0; l < c.n_layers; ++l) {
      QVERIFY2(std::abs(entropyMaps[l] - entropyTiled[l]) < 1e-4, qPrintable(QString::number(entropyMaps[l] - entropyTiled[l])));
      QVERIFY2(std::abs(largestMaps[l] - largestTiled[l]) < 1e-5, qPrintable(QString::number(largestMaps[l] - largestTiled[l])));
    }
    // A variant that cannot (sigmoid) keeps its maps in the same workspace settings.
    auto sigmoid = testing::randomisedModel(testing::smallConfig("sigmoid", "learned", 9, kT));
    sigmoid->forward(*without, k.tokens.data(), k.targets.data(), k.B, k.T);
    QVERIFY(!without->blocks[0].attn.attended_without_maps);
    QCOMPARE(without->blocks[0].attn.weights.size(), without->blocks[0].attn.shape.mapSize());
  }
};

QTEST_APPLESS_MAIN(TestTiledAttention)
#include "test_tiled_attention.moc"
