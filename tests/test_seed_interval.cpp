// The studies' interval over seeds (analysis/seed_interval.h) on data whose 95% t-intervals are
// known: hand-computed cases, a textbook sample, the t table against its large-df expansion, and
// the coverage of the interval on normal samples (about 95% of intervals hold the true mean).
#include <QtTest>

#include <cmath>

#include "analysis/seed_interval.h"
#include "core/random.h"

using namespace attnlab;

class TestSeedInterval : public QObject {
  Q_OBJECT
 private slots:
  void threeSeedsGiveTheTInterval() {
    const SeedInterval r = seedInterval95({1, 2, 3});  // mean 2, s = 1, t_{0.975,2} = 4.303
    QCOMPARE(r.n, 3);
    QCOMPARE(r.mean, 2.0);
    QVERIFY(std::abs(r.high - (2 + 4.303 / std::sqrt(3.0))) < 1e-12);
    QVERIFY(std::abs(r.low - (2 - 4.303 / std::sqrt(3.0))) < 1e-12);
  }

  void aTextbookSample() {
    // 10 values with mean 5.2 and s = 1.31656: 5.2 +- 2.262 * 1.31656 / sqrt(10) = [4.2583, 6.1417]
    const SeedInterval r = seedInterval95({3, 4, 4, 5, 5, 5, 6, 6, 7, 7});
    QVERIFY(std::abs(r.mean - 5.2) < 1e-12);
    QVERIFY(std::abs(r.low - 4.2583) < 1e-3 && std::abs(r.high - 6.1417) < 1e-3);
  }

  void equalValuesHaveNoWidthAndOneValueNoSpread() {
    const SeedInterval same = seedInterval95({0.5, 0.5, 0.5});
    QCOMPARE(same.low, 0.5);
    QCOMPARE(same.high, 0.5);
    const SeedInterval one = seedInterval95({0.7});
    QVERIFY(!one.hasSpread() && one.low == 0.7 && one.high == 0.7);
  }

  void divergedRunsAreLeftOutAndCounted() {
    const SeedInterval r = seedInterval95({1, std::nan(""), 3, INFINITY});
    QCOMPARE(r.n, 2);
    QCOMPARE(r.skipped, 2);
    QCOMPARE(r.mean, 2.0);
    QVERIFY(std::isnan(seedInterval95({std::nan("")}).mean));
  }

  void aBoundedQuantityIsCutAtItsBounds() {
    // 0.3, 0.9, 1.0: mean 0.7333, s = 0.3786, half-width 4.303 * 0.3786 / sqrt(3) = 0.9405, so the
    // plain interval runs to 1.674, past what an accuracy can be; the bounded one stops at 1
    const SeedInterval plain = seedInterval95({0.3, 0.9, 1.0});
    const SeedInterval cut = seedInterval95({0.3, 0.9, 1.0}, kShareRange);
    QVERIFY(plain.high > 1.6 && plain.low < -0.2);
    QCOMPARE(cut.high, 1.0);
    QCOMPARE(cut.low, 0.0);
    QCOMPARE(cut.mean, plain.mean);
    const SeedInterval inside = seedInterval95({0.4, 0.5, 0.6}, kShareRange);  // half-width 0.248: untouched
    QVERIFY(std::abs(inside.low - (0.5 - 4.303 * 0.1 / std::sqrt(3.0))) < 1e-12);
    QVERIFY(std::isnan(seedInterval95({}, kShareRange).mean));
  }

  void theTableMeetsTheExpansion() {
    QCOMPARE(studentT975(1), 12.706);
    QVERIFY(std::abs(studentT975(31) - 2.040) < 1e-3);   // exact 2.0395
    QVERIFY(std::abs(studentT975(60) - 2.000) < 1e-3);   // exact 2.0003
    QVERIFY(std::abs(studentT975(120) - 1.980) < 1e-3);  // exact 1.9799
    QVERIFY(std::isnan(studentT975(0)));
  }

  void aboutNinetyFivePercentOfIntervalsHoldTheMean() {
    Rng rng(7);
    int held = 0;
    const int trials = 4000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> sample;
      for (int i = 0; i < 3; ++i) sample.push_back(rng.normal(10.f, 2.f));
      const SeedInterval r = seedInterval95(sample);
      held += r.low <= 10 && 10 <= r.high;
    }
    const double coverage = double(held) / trials;  // binomial sd 0.0034
    QVERIFY2(coverage > 0.935 && coverage < 0.965, qPrintable(QString::number(coverage)));
  }

  void wilsonMatchesNewcombesTable() {
    // Newcombe (1998), Statistics in Medicine 17:857, table I, method 3 (score interval without correction)
    const struct {
      int k, n;
      double low, high;
    } cases[] = {{81, 263, 0.2553, 0.3662}, {15, 148, 0.0624, 0.1605}, {0, 20, 0.0, 0.1611}, {1, 29, 0.0061, 0.1718}};
    for (const auto& c : cases) {
      const ShareInterval r = wilsonInterval95(c.k, c.n);
      QCOMPARE(r.share, double(c.k) / c.n);
      QVERIFY2(std::abs(r.low - c.low) < 1e-4 && std::abs(r.high - c.high) < 1e-4,
               qPrintable(QString("%1/%2: [%3, %4]").arg(c.k).arg(c.n).arg(r.low).arg(r.high)));
    }
  }

  void wilsonStaysInsideTheUnitInterval() {
    const ShareInterval all = wilsonInterval95(10, 10);  // 1 - 0.2775, where a t-interval would have no width
    QCOMPARE(all.high, 1.0);
    QVERIFY(std::abs(all.low - 0.72247) < 1e-4);
    QVERIFY(std::isnan(wilsonInterval95(0, 0).share) && std::isnan(wilsonInterval95(3, 2).low));
  }
};

QTEST_APPLESS_MAIN(TestSeedInterval)
#include "test_seed_interval.moc"
