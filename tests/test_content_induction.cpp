// The content-located induction score (analysis/content_induction.h): targets on sequences with
// known repeats (ambiguous tokens skipped), a map with all weight on the targets scores 1, one
// attending a fixed distance back scores only where the distance is right, and on [t0, r, r] it
// equals map_diagnostics' offset-based inductionScore.
#include <QtTest>

#include <cmath>

#include "analysis/content_induction.h"
#include "analysis/map_diagnostics.h"

using namespace attnlab;

namespace {
Mat causalUniform(int T) {
  Mat a = Mat::Zero(T, T);
  for (int i = 0; i < T; ++i) a.row(i).head(i + 1).setConstant(1.0f / (i + 1));
  return a;
}
}  // namespace

class TestContentInduction : public QObject {
  Q_OBJECT
 private slots:
  void targetsFollowTheEarlierOccurrence() {
    // 9 a b c a b c: rows 4, 5, 6 repeat a, b, c first seen at 1, 2, 3, so they target 2, 3, 4
    QCOMPARE(inductionTargets({9, 0, 1, 2, 0, 1, 2}), (std::vector<int>{-1, -1, -1, -1, 2, 3, 4}));
    // a token seen twice before is ambiguous: no target
    QCOMPARE(inductionTargets({0, 1, 0, 2, 0}), (std::vector<int>{-1, -1, 1, -1, -1}));
    QCOMPARE(inductionTargets({}), std::vector<int>{});
  }

  void aMapOnTheTargetsScoresOne() {
    const std::vector<int> tokens = {7, 3, 1, 4, 5, 3, 1, 4, 5};
    const std::vector<int> targets = inductionTargets(tokens);
    Mat a = Mat::Zero(9, 9);
    for (int i = 0; i < 9; ++i) a(i, targets[i] >= 0 ? targets[i] : i) = 1;
    const ContentInduction c = contentInductionScore(a, targets);
    QCOMPARE(c.rows, 4);
    QCOMPARE(c.score, 1.0);
  }

  void aFixedOffsetHeadScoresOnlyWhereTheOffsetFits() {
    // two sequences whose repeats sit at different offsets (half 3, then half 2 after 2 dealt tokens);
    // the target sits n - 1 back for a half of n: a head always attending 2 back is the induction head only for the first
    const std::vector<int> first = {8, 0, 1, 2, 0, 1, 2}, second = {8, 5, 6, 0, 1, 0, 1};
    Mat twoBack = Mat::Zero(7, 7);
    for (int i = 0; i < 7; ++i) twoBack(i, std::max(0, i - 2)) = 1;
    QCOMPARE(contentInductionScore(twoBack, inductionTargets(first)).score, 1.0);
    QCOMPARE(contentInductionScore(twoBack, inductionTargets(second)).score, 0.0);
  }

  void equalsTheOffsetScoreOnRepeatedSequences() {
    const int n = 5, T = 1 + 2 * n;
    const std::vector<int> tokens = {20, 3, 9, 4, 1, 6, 3, 9, 4, 1, 6};
    Mat a = causalUniform(T);
    a(8, 4) += 0.5f;  // some structure, so the two scores are not trivially equal
    const double offset = inductionScore(a.data(), T, n, 1);
    const ContentInduction c = contentInductionScore(a, inductionTargets(tokens));
    QCOMPARE(c.rows, n);
    QVERIFY(std::abs(c.score - offset) < 1e-6);
  }
};

QTEST_MAIN(TestContentInduction)
#include "test_content_induction.moc"
