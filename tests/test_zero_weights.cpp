// The zero-weight counts of study low-precision (analysis/zero_weights.h) on hand-made maps whose
// exact zeros are known: masked cells are not counted, tiny weights are not zeros, distances fall
// in their buckets, several maps add up, and bad input says why.
#include <QtTest>

#include <cmath>
#include <limits>

#include "analysis/zero_weights.h"

using namespace attnlab;

namespace {
constexpr float kMasked = -std::numeric_limits<float>::infinity();

// A causal 6x6 map: row i gives its weight to j <= i; the listed (i, j) are exact zeros.
void causalMap(Mat& scores, Mat& weights, const std::vector<std::pair<int, int>>& zeros) {
  scores = Mat::Zero(6, 6);
  weights = Mat::Constant(6, 6, 1e-30f);  // tiny but not zero: must not count
  for (int i = 0; i < 6; ++i)
    for (int j = i + 1; j < 6; ++j) scores(i, j) = kMasked, weights(i, j) = 0;  // masked: zero but invisible
  for (auto [i, j] : zeros) weights(i, j) = 0;
}
}  // namespace

class TestZeroWeights : public QObject {
  Q_OBJECT
 private slots:
  void countsExactZerosByDistance() {
    Mat scores, weights;
    // distances: (5,0) 5, (4,0) 4, (5,1) 4, (3,2) 1
    causalMap(scores, weights, {{5, 0}, {4, 0}, {5, 1}, {3, 2}});
    ZeroWeightCounts counts(2);  // buckets [0,2) [2,4) [4,6)
    counts.add(scores, weights);
    QCOMPARE(counts.buckets(), 3);
    // visible cells per distance d in a 6-row causal map: 6 - d
    QCOMPARE(counts.visible(0), 6L + 5L);  // d = 0, 1
    QCOMPARE(counts.visible(1), 4L + 3L);  // d = 2, 3
    QCOMPARE(counts.visible(2), 2L + 1L);  // d = 4, 5
    QCOMPARE(counts.zeros(0), 1L);
    QCOMPARE(counts.zeros(1), 0L);
    QCOMPARE(counts.zeros(2), 3L);
    QCOMPARE(counts.share(2), 1.0);
    QCOMPARE(counts.share(0), 1.0 / 11);
    QCOMPARE(counts.totalVisible(), 21L);
    QCOMPARE(counts.totalZeros(), 4L);
    QCOMPARE(counts.overallShare(), 4.0 / 21);
  }

  void mapsAddUpAndNegativeZeroCounts() {
    Mat scores, weights;
    causalMap(scores, weights, {{5, 0}});
    ZeroWeightCounts counts(6);  // one bucket
    counts.add(scores, weights);
    weights(2, 1) = -0.0f;  // a flushed negative value is still exactly zero
    counts.add(scores, weights);
    QCOMPARE(counts.buckets(), 1);
    QCOMPARE(counts.visible(0), 42L);
    QCOMPARE(counts.zeros(0), 3L);
  }

  void bidirectionalMapsUseAbsoluteDistance() {
    const Mat scores = Mat::Zero(3, 3);
    Mat weights = Mat::Constant(3, 3, 0.25f);
    weights(0, 2) = 0;  // distance 2, above the diagonal
    ZeroWeightCounts counts(1);
    counts.add(scores, weights);
    QCOMPARE(counts.visible(2), 2L);
    QCOMPARE(counts.zeros(2), 1L);
    QVERIFY(std::isnan(ZeroWeightCounts(4).overallShare()));  // nothing seen: no share
  }

  void badInputSaysWhy() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ZeroWeightCounts(0));
    ZeroWeightCounts counts(1);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, counts.add(Mat::Zero(3, 3), Mat::Zero(3, 2)));
  }
};

QTEST_APPLESS_MAIN(TestZeroWeights)
#include "test_zero_weights.moc"
