// Head importance: the head mask hook (off = unchanged, gain 0 = head removed, its gradient
// against finite differences), zero output weights give zero gradient importance, and removing
// the only path of a task drops its accuracy to chance.
#include <QtTest>

#include <cmath>

#include "analysis/analysis.h"
#include "analysis/head_importance.h"
#include "io/config_json.h"
#include "model/workspace.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
ExperimentConfig config(const char* preset, std::initializer_list<const char*> overrides) {
  ExperimentConfig c;
  if (std::string why = loadPreset(preset, c); !why.empty()) qFatal("%s", why.c_str());
  for (const char* o : overrides)
    if (std::string bad = applyOverride(c, o); !bad.empty()) qFatal("%s", bad.c_str());
  return c;
}

double lossOf(const Model& m, const Batch& b) {
  auto ws = makeWorkspace();
  return m.forward(*ws, b.inputs.data(), b.targets.data(), b.B, b.T);
}

// Zeroes the output-projection columns that read head (layer, head).
void zeroOutputWeights(Model& m, int layer, int head) {
  const int dh = m.config().headDim();
  m.params().find("blocks." + std::to_string(layer) + ".attn.wo.weight")->value.middleCols(head * dh, dh).setZero();
}
}  // namespace

class TestAnalysisImportance : public QObject {
  Q_OBJECT

 private slots:
  // Gains of 1 change nothing (bitwise); gain 0 equals zeroing the head's output weights.
  void headGainsMatchTheirMeaning() {
    Trainer t(config("induction", {"model.d_model=32", "train.batch=4"}));
    Model& m = t.model();
    const Batch b = validationBatches(t, 1, 5).front();
    const double intact = lossOf(m, b);
    m.setHeadGains({{1, 1, 1, 1}, {1, 1, 1, 1}});
    QCOMPARE(lossOf(m, b), intact);
    m.setHeadGains({{1, 1, 1, 1}, {1, 0, 1, 1}});
    const double ablated = lossOf(m, b);
    QVERIFY(ablated != intact);
    m.setHeadGains({});
    QCOMPARE(lossOf(m, b), intact);
    zeroOutputWeights(m, 1, 1);
    QVERIFY(std::abs(lossOf(m, b) - ablated) < 1e-6);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, m.setHeadGains({{1, 1, 1, 1}}));
  }

  // d(loss)/d(gain) from backward() against central differences, at gains away from 1 too.
  void gainGradientMatchesFiniteDifferences() {
    Trainer t(config("induction", {"model.d_model=32", "model.attention_only=false", "model.d_ff=64", "train.batch=4"}));
    for (int s = 0; s < 30; ++s) t.trainStep();  // away from the symmetric start
    Model& m = t.model();
    const Batch b = validationBatches(t, 1, 6).front();
    const std::vector<std::vector<float>> gains = {{1.0f, 0.5f, 1.0f, 1.5f}, {1.0f, 1.0f, 0.0f, 1.0f}};
    m.setHeadGains(gains);
    auto ws = makeWorkspace();
    m.forward(*ws, b.inputs.data(), b.targets.data(), b.B, b.T);
    m.backward(*ws);
    const auto grad = m.headGainGradients();
    m.params().zeroGrad();
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 4; ++h) {
        const float eps = 1e-2f;
        auto plus = gains, minus = gains;
        plus[l][h] += eps;
        minus[l][h] -= eps;
        m.setHeadGains(plus);
        const double lp = lossOf(m, b);
        m.setHeadGains(minus);
        const double lm = lossOf(m, b);
        const double numeric = (lp - lm) / (2 * eps);
        QVERIFY2(std::abs(numeric - grad[l][h]) < 2e-3 + 2e-2 * std::abs(numeric),
                 qPrintable(QString("head %1.%2: backward %3, finite differences %4").arg(l).arg(h).arg(grad[l][h]).arg(numeric)));
      }
    m.setHeadGains({});
  }

  // A head whose output weights are zero has gradient importance exactly 0 (and ablation 0).
  void zeroOutputWeightsGiveZeroImportance() {
    Trainer t(config("induction", {"model.d_model=32", "train.batch=8"}));
    for (int s = 0; s < 20; ++s) t.trainStep();
    zeroOutputWeights(t.model(), 0, 2);
    const auto heads = headImportance(t.model(), validationBatches(t, 2, 9));
    QCOMPARE(heads.size(), size_t(8));
    for (const HeadImportance& h : heads) {
      if (h.layer == 0 && h.head == 2) {
        QCOMPARE(h.gradient, 0.0);
        QCOMPARE(h.ablation, 0.0);
      } else {
        QVERIFY(h.gradient > 0);
      }
    }
    for (const auto& p : t.model().params().all()) QVERIFY(p->grad.isZero());  // left clean
  }

  // One layer, one head, no MLP: attention is the only way the copy can see the list. Trained,
  // the model copies; with the head removed it can only guess among the 16 symbols (chance 1/16).
  void ablatingTheOnlyPathDropsToChance() {
    Trainer t(config("copy", {"model.n_layers=1", "model.n_heads=1", "model.d_model=32", "model.attention_only=true",
                              "model.positional=learned", "task.settings.length=8", "train.steps=300", "train.batch=32",
                              "train.warmup=20", "train.eval_every=0"}));
    while (!t.finished()) t.trainStep();
    const std::vector<Batch> batches = validationBatches(t, 4, 3);
    const HeadImportanceReport r = headImportanceReport(t.model(), batches, true, 1);
    qInfo("copy with one head: accuracy %.3f intact, %.3f without the head; ablation importance %.3f",
          r.intact.accuracy, r.curves[0].metric.back(), r.heads[0].ablation);
    QVERIFY2(r.intact.accuracy > 0.9, qPrintable(QString::number(r.intact.accuracy)));
    const double chance = 1.0 / 16;
    QVERIFY2(std::abs(r.curves[0].metric.back() - chance) < 0.05, qPrintable(QString::number(r.curves[0].metric.back())));
    QVERIFY(r.heads[0].ablation > 1.0);
    // Curves: one point per removal plus the intact start; the first equals the intact metric.
    for (const HeadDropCurve& c : r.curves) {
      QCOMPARE(c.metric.size(), size_t(2));
      QCOMPARE(c.metric.front(), r.intact.accuracy);
    }
  }

  // Ascending order removes the least important head first.
  void dropOrdersFollowImportance() {
    Trainer t(config("induction", {"model.d_model=32", "train.batch=16"}));
    for (int s = 0; s < 40; ++s) t.trainStep();
    const HeadImportanceReport r = headImportanceReport(t.model(), validationBatches(t, 2, 4), true, 2);
    QCOMPARE(r.curves.size(), size_t(3));
    QCOMPARE(r.curves[0].order, std::string("ascending"));
    double least = 1e9, most = -1e9;
    for (const HeadImportance& h : r.heads) least = std::min(least, h.ablation), most = std::max(most, h.ablation);
    auto importanceOf = [&](std::pair<int, int> lh) {
      for (const HeadImportance& h : r.heads)
        if (h.layer == lh.first && h.head == lh.second) return h.ablation;
      return std::nan("");
    };
    QCOMPARE(importanceOf(r.curves[0].removed.front()), least);
    QCOMPARE(importanceOf(r.curves[1].removed.front()), most);
    QCOMPARE(r.curves[2].removed.size(), size_t(8));
    // With every head removed, all orders reach the same model.
    QCOMPARE(r.curves[0].loss.back(), r.curves[1].loss.back());
    QCOMPARE(r.curves[0].loss.back(), r.curves[2].loss.back());
  }
};

QTEST_APPLESS_MAIN(TestAnalysisImportance)
#include "test_analysis_importance.moc"
