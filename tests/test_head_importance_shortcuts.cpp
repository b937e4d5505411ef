// The shortcuts that make head importance affordable on a 12 x 12-head model: an ablation pass that
// starts at the ablated head's block from the intact pass's stream gives exactly the full pass's
// loss (for every attention variant, so a variant whose blocks read more than the residual stream
// fails here), and head-drop curves of many heads are sampled at evenly spaced counts.
#include <QtTest>

#include "analysis/head_importance.h"
#include "analysis/live_head_importance.h"
#include "attention/attention.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

std::vector<Batch> twoBatches(int vocab) {
  std::vector<Batch> batches;
  Rng rng(11);
  for (int b = 0; b < 2; ++b) {
    Batch batch{2, 8, {}, {}};
    for (int i = 0; i < batch.B * batch.T; ++i) {
      batch.inputs.push_back(static_cast<int>(rng.uniform() * vocab) % vocab);
      batch.targets.push_back(i % 3 == 0 ? -1 : static_cast<int>(rng.uniform() * vocab) % vocab);
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

// The same float operations in the same order, except that the linear variant's running state
// may be summed in another order on another CPU's vector width (seen on an AMD EPYC: 1.6e-8
// apart): equal to float rounding, far below any real difference a wrong start block makes.
void expectSameLoss(double shortened, double full) {
  QVERIFY2(std::abs(shortened - full) <= 1e-6 * std::abs(full),
           qPrintable(QStringLiteral("shortened pass %1, full pass %2").arg(shortened, 0, 'g', 12).arg(full, 0, 'g', 12)));
}

}  // namespace

class HeadImportanceShortcutsTest : public QObject {
  Q_OBJECT
 private slots:
  void aPassFromTheAblatedBlockEqualsTheFullPass_data() {
    QTest::addColumn<QString>("variant");
    for (const auto& e : AttentionRegistry::instance().entries()) QTest::newRow(e.name.c_str()) << QString::fromStdString(e.name);
  }
  void aPassFromTheAblatedBlockEqualsTheFullPass() {
    QFETCH(QString, variant);
    ModelConfig c = smallConfig(variant.toStdString(), "rope", 9, 12);
    c.n_layers = 3;
    std::unique_ptr<Model> model;
    try {
      model = randomisedModel(c);
    } catch (const std::exception& e) {
      QSKIP(qPrintable(QStringLiteral("%1 does not build in this shape: %2").arg(variant, e.what())));
    }
    const std::vector<Batch> batches = twoBatches(c.vocab);
    model->setHeadGains({});
    const BlockInputs inputs = blockInputs(*model, batches);
    for (int l = 0; l < c.n_layers; ++l) {
      std::vector<std::vector<float>> gains(c.n_layers, std::vector<float>(c.n_heads, 1.0f));
      gains[l][1] = 0;
      model->setHeadGains(gains);
      const double full = evaluateOn(*model, batches, false).loss;
      expectSameLoss(lossFrom(*model, batches, l, inputs), full);
    }
  }

  // Cross-layer KV (model.kv_share_group): blocks 1 and 2 read block 0's keys and values, so a pass
  // for an ablation there starts at block 0 and still gives the full pass's loss exactly.
  void aPassWithSharedKvEqualsTheFullPass_data() {
    QTest::addColumn<int>("group");
    QTest::newRow("groups of 2") << 2;
    QTest::newRow("groups of 3") << 3;
  }
  void aPassWithSharedKvEqualsTheFullPass() {
    QFETCH(int, group);
    ModelConfig c = smallConfig("softmax", "rope", 9, 12);
    c.n_layers = 3;
    c.kv_share_group = group;
    const auto model = randomisedModel(c);
    const std::vector<Batch> batches = twoBatches(c.vocab);
    model->setHeadGains({});
    const BlockInputs inputs = blockInputs(*model, batches);
    for (int l = 0; l < c.n_layers; ++l) {
      std::vector<std::vector<float>> gains(c.n_layers, std::vector<float>(c.n_heads, 1.0f));
      gains[l][1] = 0;
      model->setHeadGains(gains);
      expectSameLoss(lossFrom(*model, batches, l, inputs), evaluateOn(*model, batches, false).loss);
    }
  }

  void curvesOfFewHeadsHaveEveryCount() {
    QCOMPARE(dropCurvePoints(8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
    QCOMPARE(dropCurvePoints(0), std::vector<int>{0});
    const std::vector<int> all = dropCurvePoints(kMaxDropPoints);
    QCOMPARE(all.size(), size_t(kMaxDropPoints + 1));
    QCOMPARE(all.back(), kMaxDropPoints);
  }

  void curvesOfManyHeadsAreEvenlySampled() {
    const std::vector<int> p = dropCurvePoints(144);
    QCOMPARE(p.size(), size_t(kMaxDropPoints + 1));
    QCOMPARE(p.front(), 0);
    QCOMPARE(p.back(), 144);
    for (size_t k = 1; k < p.size(); ++k) QCOMPARE(p[k] - p[k - 1], 3);
    const std::vector<int> q = dropCurvePoints(100);
    for (size_t k = 1; k < q.size(); ++k) QVERIFY(q[k] - q[k - 1] == 2 || q[k] - q[k - 1] == 3);
  }

  void aSampledCurveMeasuresTheHeadsRemovedAtEachPoint() {
    ModelConfig c = smallConfig("softmax", "rope", 9, 12);
    c.n_layers = 7;
    c.n_heads = 8;  // 56 heads: more than kMaxDropPoints
    c.d_model = 32;
    auto model = randomisedModel(c);
    const std::vector<Batch> batches = twoBatches(c.vocab);
    const LiveHeadImportance live = liveHeadImportance(*model, batches, false, {}, 5);
    for (const HeadDropCurve& curve : live.curves) {
      QCOMPARE(curve.count, dropCurvePoints(56));
      QCOMPARE(curve.loss.size(), curve.count.size());
      const size_t k = curve.count.size() / 2;  // a point inside: the first count[k] heads of the order off
      std::vector<std::vector<float>> gains(c.n_layers, std::vector<float>(c.n_heads, 1.0f));
      for (int i = 0; i < curve.count[k]; ++i) gains[curve.removed[i].first][curve.removed[i].second] = 0;
      model->setHeadGains(gains);
      QCOMPARE(curve.loss[k], evaluateOn(*model, batches, false).loss);
    }
    // The ablations from each block agree with the intact-model report's.
    const std::vector<HeadImportance> intact = headImportance(*model, batches);
    for (size_t i = 0; i < intact.size(); ++i) QCOMPARE(live.heads[i].ablation, intact[i].ablation);
  }
};

QTEST_APPLESS_MAIN(HeadImportanceShortcutsTest)
#include "test_head_importance_shortcuts.moc"
