// The sampler's cut (sample/next_token.h) on logits written by hand, against the definition worked
// out here: softmax(z / T), the k most likely, then the shortest prefix whose renormalised mass
// reaches p, renormalised; and pickToken drawing only what the cut kept.
#include <QtTest>

#include <cmath>
#include <set>

#include "sample/next_token.h"

using namespace attnlab;

namespace {

// z = log of the probabilities 0.4, 0.25, 0.15, 0.1, 0.06, 0.04 (ids shuffled), so every cut
// below has a known answer.
const std::vector<float> kLogits = {std::log(0.10f), std::log(0.40f), std::log(0.04f),
                                    std::log(0.25f), std::log(0.06f), std::log(0.15f)};
constexpr int kVocab = 6;

std::vector<int> keptIds(const NextTokenDistribution& d) {
  std::vector<int> ids;
  for (const TokenChance& c : d.kept) ids.push_back(c.token);
  return ids;
}

}  // namespace

class TestNextTokenDistribution : public QObject {
  Q_OBJECT

 private slots:
  void noCutKeepsTheFullSoftmax() {
    const NextTokenDistribution d = nextTokenDistribution(kLogits.data(), kVocab, {});
    QCOMPARE(keptIds(d), (std::vector<int>{1, 3, 5, 0, 4, 2}));  // most likely first
    QVERIFY(std::abs(d.keptMass - 1.0) < 1e-9);
    QVERIFY(std::abs(d.kept[0].probability - 0.40) < 1e-6);
    QVERIFY(std::abs(d.kept[5].probability - 0.04) < 1e-6);
  }

  void topKKeepsTheKMostLikelyRenormalised() {
    SamplingSettings s;
    s.topK = 3;
    const NextTokenDistribution d = nextTokenDistribution(kLogits.data(), kVocab, s);
    QCOMPARE(keptIds(d), (std::vector<int>{1, 3, 5}));
    QVERIFY(std::abs(d.keptMass - 0.80) < 1e-6);
    QVERIFY(std::abs(d.kept[0].probability - 0.40 / 0.80) < 1e-6);
    QVERIFY(std::abs(d.kept[2].probability - 0.15 / 0.80) < 1e-6);
    QVERIFY(std::abs(d.kept[2].full - 0.15) < 1e-6);  // the full softmax stays beside the cut one
  }

  void topPKeepsTheShortestPrefixReachingP() {
    SamplingSettings s;
    s.topP = 0.6;  // 0.40 < 0.6 <= 0.65
    QCOMPARE(keptIds(nextTokenDistribution(kLogits.data(), kVocab, s)), (std::vector<int>{1, 3}));
    s.topK = 2;  // after the top-k cut the mass is renormalised: 0.40 / 0.65 = 0.615 reaches 0.6
    QCOMPARE(keptIds(nextTokenDistribution(kLogits.data(), kVocab, s)), (std::vector<int>{1}));
  }

  void temperatureDividesTheLogits() {
    SamplingSettings s;
    s.temperature = 2.0;  // softmax(z / 2): probabilities proportional to sqrt(p)
    const NextTokenDistribution d = nextTokenDistribution(kLogits.data(), kVocab, s);
    double norm = 0;
    for (double p : {0.40, 0.25, 0.15, 0.10, 0.06, 0.04}) norm += std::sqrt(p);
    QVERIFY(std::abs(d.kept[0].probability - std::sqrt(0.40) / norm) < 1e-6);
    QVERIFY(std::abs(d.kept[5].probability - std::sqrt(0.04) / norm) < 1e-6);
  }

  void samplingDrawsOnlyWhatTheCutKept() {
    SamplingSettings s;
    s.topK = 2;
    Rng rng(7);
    std::set<int> drawn;
    int first = 0;
    for (int i = 0; i < 2000; ++i) {
      const int t = pickToken(kLogits.data(), kVocab, s, rng);
      drawn.insert(t);
      first += t == 1;
    }
    QCOMPARE(drawn, (std::set<int>{1, 3}));
    // P(id 1) = 0.40 / 0.65 = 0.615; 2,000 draws put the share within 0.05 of it with room to spare
    QVERIFY2(std::abs(first / 2000.0 - 0.40 / 0.65) < 0.05, qPrintable(QString::number(first / 2000.0)));
  }

  void badSettingsAreRefused() {
    SamplingSettings s;
    s.topK = -1;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, nextTokenDistribution(kLogits.data(), kVocab, s));
    s = {};
    s.topP = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, nextTokenDistribution(kLogits.data(), kVocab, s));
    s = {};
    s.temperature = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, nextTokenDistribution(kLogits.data(), kVocab, s));
  }
};

QTEST_APPLESS_MAIN(TestNextTokenDistribution)
#include "test_next_token_distribution.moc"
