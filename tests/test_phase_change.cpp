// The phase-change detector of study phase-change (analysis/phase_change.h) on synthetic curves
// whose change is known: a noisy sigmoid centred on a known step (found there, with the logistic's
// 25%-75% width; an early bump does not stretch it), a falling loss checked negated, uneven step spacing, and curves that must give
// none (flat noise, a rise below the margin, a falling curve), plus malformed curves.
#include <QtTest>

#include <cmath>

#include "analysis/phase_change.h"
#include "core/random.h"

using namespace attnlab;

namespace {

struct Curve {
  std::vector<double> steps, values;
};

// base + height / (1 + exp(-(step - centre) / scale)) + uniform noise in [-noise, noise], every `every` steps.
Curve sigmoid(double centre, double scale, double base, double height, double noise, int last, int every, uint64_t seed) {
  Rng rng(seed);
  Curve c;
  for (int s = 0; s <= last; s += every) {
    c.steps.push_back(s);
    c.values.push_back(base + height / (1 + std::exp(-(s - centre) / scale)) + noise * (2 * rng.uniform() - 1));
  }
  return c;
}

}  // namespace

class TestPhaseChange : public QObject {
  Q_OBJECT
 private slots:
  void aNoisySigmoidIsFoundAtItsStep() {
    for (uint64_t seed : {1, 2, 3, 4, 5}) {
      const Curve c = sigmoid(400, 20, 0.05, 0.6, 0.03, 1000, 10, seed);
      const PhaseChange p = detectPhaseChange(c.steps, c.values);
      QVERIFY(p.error.empty());
      QVERIFY(p.found);
      QVERIFY2(std::abs(p.step - 400) <= 10, qPrintable(QString::number(p.step)));
      // a logistic rises from 25% to 75% in 2 ln(3) scale = 43.9 steps; the 3-point smoothing widens it a little
      QVERIFY2(p.width > 35 && p.width < 60, qPrintable(QString::number(p.width)));
      QVERIFY(std::abs(p.rise - 0.6) < 0.05);
    }
  }

  void aFallingLossIsFoundNegated() {
    Curve c = sigmoid(300, 15, -3.4, 2.9, 0.05, 600, 20, 9);  // -loss: a loss falling from 3.4 to 0.5 about step 300
    const PhaseChange p = detectPhaseChange(c.steps, c.values, {0.5, 1});
    QVERIFY(p.found);
    QVERIFY2(std::abs(p.step - 300) <= 20, qPrintable(QString::number(p.step)));
  }

  void unevenStepsInterpolate() {
    // a step from 0 to 1 between steps 100 and 300: smoothing off, the halfway level is crossed at 200
    const PhaseChange p = detectPhaseChange({0, 50, 100, 300, 350}, {0, 0, 0, 1, 1}, {0.2, 0});
    QVERIFY(p.found);
    QCOMPARE(p.step, 200.0);
    QCOMPARE(p.width, 100.0);  // 25% at step 150, 75% at step 250
  }

  void anEarlyBumpDoesNotStretchTheWidth() {
    Curve c = sigmoid(400, 20, 0.05, 0.8, 0.01, 1000, 10, 1);
    for (size_t i = 0; i < c.steps.size(); ++i)
      if (c.steps[i] >= 100 && c.steps[i] <= 200) c.values[i] += 0.12;  // a plateau of 15% of the rise, long before the change
    const PhaseChange p = detectPhaseChange(c.steps, c.values);
    QVERIFY(p.found);
    QVERIFY2(std::abs(p.step - 400) <= 10, qPrintable(QString::number(p.step)));
    QVERIFY2(p.width > 35 && p.width < 60, qPrintable(QString::number(p.width)));
  }

  void flatNoiseGivesNone() {
    for (uint64_t seed : {1, 2, 3}) {
      const Curve c = sigmoid(0, 1, 0.05, 0, 0.1, 1000, 10, seed);  // height 0: noise only
      const PhaseChange p = detectPhaseChange(c.steps, c.values);
      QVERIFY(p.error.empty());
      QVERIFY2(!p.found, qPrintable(QString::number(p.rise)));
    }
  }

  void aRiseBelowTheMarginGivesNone() {
    const Curve c = sigmoid(400, 20, 0.05, 0.15, 0.01, 1000, 10, 1);
    const PhaseChange p = detectPhaseChange(c.steps, c.values, {0.2, 1});
    QVERIFY(!p.found);
    QVERIFY(p.rise > 0.1 && p.rise < 0.2);
    QVERIFY(detectPhaseChange(c.steps, c.values, {0.1, 1}).found);  // the same curve counts under a margin it clears
  }

  void aFallingCurveGivesNone() {
    const Curve c = sigmoid(400, 20, 0.7, -0.6, 0.02, 1000, 10, 1);
    QVERIFY(!detectPhaseChange(c.steps, c.values).found);
  }

  void malformedCurvesSayWhy() {
    QVERIFY(detectPhaseChange({0, 1, 2}, {0, 1}).error.find("3 steps but 2 values") != std::string::npos);
    QVERIFY(detectPhaseChange({0, 1}, {0, 1}).error.find("at least 3 points") != std::string::npos);
    QVERIFY(detectPhaseChange({0, 2, 1}, {0, 1, 1}).error.find("steps must increase") != std::string::npos);
    QVERIFY(detectPhaseChange({0, 1, 2}, {0, NAN, 1}).error.find("not finite") != std::string::npos);
    QVERIFY(!detectPhaseChange({}, {}).found);
  }
};

QTEST_MAIN(TestPhaseChange)
#include "test_phase_change.moc"
