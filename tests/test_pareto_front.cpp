// analysis/pareto_front.h: which points of (cost, loss) no other point beats, on hand-made sets.
#include <QtTest>

#include <cmath>

#include "analysis/pareto_front.h"

using namespace attnlab;

class TestParetoFront : public QObject {
  Q_OBJECT

 private slots:
  void keepsOnlyTheUnbeatenPointsByCost() {
    // 0 (4, 1.0) and 2 (1, 3.0) and 3 (2, 1.5) are optimal; 1 (4, 2.0) is beaten by 0 and 3, 4 (3, 1.5) by 3
    const std::vector<CostLoss> points = {{4, 1.0}, {4, 2.0}, {1, 3.0}, {2, 1.5}, {3, 1.5}};
    QCOMPARE(paretoFront(points), (std::vector<int>{2, 3, 0}));
  }
  void equalPointsAreBothOnTheFront() {
    const std::vector<CostLoss> points = {{2, 1.0}, {2, 1.0}, {3, 1.0}};
    QCOMPARE(paretoFront(points), (std::vector<int>{0, 1}));
  }
  void sameCostKeepsTheLowerLossOnly() {
    const std::vector<CostLoss> points = {{2, 1.2}, {2, 1.1}, {1, 1.3}};
    QCOMPARE(paretoFront(points), (std::vector<int>{2, 1}));
  }
  void pointsWithNanAreLeftOut() {
    const std::vector<CostLoss> points = {{1, std::nan("")}, {2, 1.0}, {std::nan(""), 0.1}};
    QCOMPARE(paretoFront(points), (std::vector<int>{1}));
    QVERIFY(paretoFront({}).empty());
  }
};

QTEST_MAIN(TestParetoFront)
#include "test_pareto_front.moc"
