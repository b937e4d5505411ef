// Gradient x input against finite differences through the hook points, and Kendall's tau-b by hand.
#include <QtTest>

#include <cmath>

#include "interpret/activation_hooks.h"
#include "interpret/input_attribution.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 7, 3, 1, 4, 5};

double logProb(const Mat& logits, int token) {
  const auto row = logits.row(logits.rows() - 1).cast<double>();
  return row(token) - row.maxCoeff() - std::log((row.array() - row.maxCoeff()).exp().sum());
}

}  // namespace

class TestInterpretAttribution : public QObject {
  Q_OBJECT

 private slots:
  void kendallTauByHand() {
    QCOMPARE(kendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    QCOMPARE(kendallTau({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    // pairs of (1,2,3) vs (1,3,2): 2 concordant, 1 discordant -> 1/3
    QVERIFY(std::abs(kendallTau({1, 2, 3}, {1, 3, 2}) - 1.0 / 3) < 1e-12);
    // tau-b with a tie in b: a = (1,2,3), b = (1,1,2): C = 2, D = 0, ties in b 1 -> 2 / sqrt(3 * 2)
    QVERIFY(std::abs(kendallTau({1, 2, 3}, {1, 1, 2}) - 2 / std::sqrt(6.0)) < 1e-12);
    QCOMPARE(kendallTau({1, 1, 1}, {1, 2, 3}), 0.0);
  }

  // a_t = x_t . d log p / d x_t is the derivative of log p when x_t is scaled by (1 + eps).
  void gradientTimesInputMatchesFiniteDifferences() {
    for (const char* positional : {"rope", "learned"}) {
      auto model = randomisedModel(smallConfig("softmax", positional));
      const InputAttribution a = inputAttribution(*model, kTokens);
      QCOMPARE(a.grad_x_input.size(), kTokens.size());
      double diff = 0, norm = 0;
      for (int t = 0; t < static_cast<int>(kTokens.size()); ++t) {
        auto scaled = [&](float eps) {
          EditHook scale([](HookSite s, int l) { return s == HookSite::resid_pre && l == 0; },
                         [&](const Activation& x) {
                           for (int i = 0; i < x.width; ++i) x.row(0, 0, t)[i] *= 1 + eps;
                         });
          return logProb(runWithHooks(*model, kTokens, &scale), a.token);
        };
        const double numeric = (scaled(1e-3f) - scaled(-1e-3f)) / 2e-3;
        diff += std::pow(numeric - a.grad_x_input[t], 2);
        norm += numeric * numeric + a.grad_x_input[t] * a.grad_x_input[t];
      }
      QVERIFY2(norm > 0 && std::sqrt(diff / norm) < 1e-2, qPrintable(QString("%1: relative error %2").arg(positional).arg(std::sqrt(diff / norm))));
      double attention = 0, rollout = 0;
      for (size_t t = 0; t < kTokens.size(); ++t) {
        attention += a.attention[t];
        rollout += a.rollout[t];
      }
      QVERIFY(std::abs(attention - 1) < 1e-5 && std::abs(rollout - 1) < 1e-5);
      QVERIFY(std::abs(a.tau_attention) <= 1 && std::abs(a.tau_rollout) <= 1);
    }
  }
};

QTEST_APPLESS_MAIN(TestInterpretAttribution)
#include "test_interpret_attribution.moc"
