// Attention rollout against products worked out by hand.
#include <QtTest>

#include "analysis/rollout.h"

using namespace attnlab;

namespace {
Trace traceOf(const std::vector<std::vector<Mat>>& layers) {
  Trace t;
  t.tokens.assign(layers[0][0].rows(), 0);
  for (const auto& heads : layers) {
    LayerTrace l;
    for (const Mat& w : heads) l.heads.push_back({Mat(), w});
    t.layers.push_back(l);
  }
  return t;
}
}  // namespace

class TestAnalysisRollout : public QObject {
  Q_OBJECT

 private slots:
  // Maps that attend only to themselves leave every position attributed to itself.
  void selfAttentionGivesIdentity() {
    const Mat id = Mat::Identity(4, 4);
    QVERIFY(attentionRollout(traceOf({{id, id}, {id}})).isApprox(id));
  }

  // Two layers on 2 tokens. Layer 1: one head previous-token [[1,0],[1,0]], one head self
  // (mean [[1,0],[.5,.5]]). Layer 2: uniform causal [[1,0],[.5,.5]].
  // (A1 + I)/2 = [[1,0],[.25,.75]]; (A2 + I)/2 = [[1,0],[.25,.75]];
  // product = [[1,0],[.25 + .75*.25, .75*.75]] = [[1,0],[.4375,.5625]].
  void twoLayersByHand() {
    Mat prev(2, 2), self = Mat::Identity(2, 2), uniform(2, 2), want(2, 2);
    prev << 1, 0, 1, 0;
    uniform << 1, 0, 0.5, 0.5;
    want << 1, 0, 0.4375, 0.5625;
    const Mat r = attentionRollout(traceOf({{prev, self}, {uniform}}));
    QVERIFY2(r.isApprox(want, 1e-6f), qPrintable(QString("%1 %2").arg(r(1, 0)).arg(r(1, 1))));
    // Rows of row-stochastic maps stay row-stochastic.
    QVERIFY(std::abs(r.row(1).sum() - 1.0f) < 1e-6f);
  }

  // The later layer multiplies from the left: swapping the layers changes the answer.
  void laterLayersMultiplyFromTheLeft() {
    Mat a(3, 3), b(3, 3);
    a << 1, 0, 0, 1, 0, 0, 0, 1, 0;  // previous token (row 0 itself)
    b << 1, 0, 0, 0, 1, 0, 1, 0, 0;  // row 2 looks at the first token
    const Mat half = Mat::Identity(3, 3) * 0.5f;
    const Mat want = (b * 0.5f + half) * (a * 0.5f + half);
    QVERIFY(attentionRollout(traceOf({{a}, {b}})).isApprox(want));
    QVERIFY(!attentionRollout(traceOf({{b}, {a}})).isApprox(want));
  }
};

QTEST_APPLESS_MAIN(TestAnalysisRollout)
#include "test_analysis_rollout.moc"
