// QK-guard (train.qk_guard, train/qk_guard.h): every step records each layer's largest |s_ij|; a
// softmax layer switches to qk_norm after the first step whose largest score exceeds the threshold,
// not before, with tau_h at the threshold, and from then on its scores satisfy |s| <= tau_h. The
// run is the unguarded run bit for bit until the switch; the switch reaches the checkpoint, so a
// run resumed before or after it ends exactly where the uninterrupted guarded run ends. Scaling W_q
// by c > 0 leaving qk_norm maps unchanged is test_mechanism_variants' qkNormIgnoresQueryScale.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/checkpoint.h"
#include "train/qk_guard.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {

// A small copy model at 10x the usual learning rate, so its scores grow fast.
ExperimentConfig fastConfig(double guard) {
  ExperimentConfig c;
  c.task.name = "copy";
  c.model.d_model = 16;
  c.model.n_layers = 2;
  c.model.n_heads = 2;
  c.model.d_ff = 32;
  c.model.context = 16;
  c.train.steps = 60;
  c.train.batch = 4;
  c.train.warmup = 5;
  c.train.lr = 3e-2;
  c.train.eval_every = 0;
  c.train.threads = 1;
  c.train.qk_guard = guard;
  return c;
}

std::vector<TrainPoint> trainAll(Trainer& trainer) {
  while (!trainer.finished()) trainer.trainStep();
  return trainer.history();
}

// The first step (1-based) at which some layer's largest score exceeds `threshold`, or 0.
int firstCrossing(const std::vector<TrainPoint>& history, double threshold) {
  for (const TrainPoint& p : history)
    for (double s : p.layer_max_score)
      if (s > threshold) return p.step;
  return 0;
}

float largestTau(const Model& model, int layer) {
  return model.params().find("blocks." + std::to_string(layer) + ".attn.qk_norm_tau")->value.cwiseAbs().maxCoeff();
}

void compareRunsExactly(const Trainer& a, const Trainer& b) {
  QCOMPARE(a.model().config().attention, b.model().config().attention);
  const auto& pa = a.model().params().all();
  const auto& pb = b.model().params().all();
  QCOMPARE(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    QCOMPARE(pa[i]->name, pb[i]->name);
    QVERIFY2(std::memcmp(pa[i]->value.data(), pb[i]->value.data(), pa[i]->value.size() * sizeof(float)) == 0, pa[i]->name.c_str());
    QVERIFY(std::memcmp(a.optimizer().secondMoments()[i].data(), b.optimizer().secondMoments()[i].data(),
                        pa[i]->value.size() * sizeof(float)) == 0);
  }
  QCOMPARE(a.history().size(), b.history().size());
  for (size_t i = 0; i < a.history().size(); ++i) {
    QVERIFY2(a.history()[i].loss == b.history()[i].loss, qPrintable(QString::number(i + 1)));
    QCOMPARE(a.history()[i].layer_max_score, b.history()[i].layer_max_score);
    QCOMPARE(a.history()[i].qk_guard_switched, b.history()[i].qk_guard_switched);
  }
}

}  // namespace

class TestQkGuard : public QObject {
  Q_OBJECT
  std::vector<TrainPoint> baseline_;  // the unguarded run
  double threshold_ = 0;             // crossed in the middle of it
  int crossing_ = 0;

 private slots:
  void initTestCase() {
    Trainer plain(fastConfig(0));
    baseline_ = trainAll(plain);
    const double first = baseline_.front().layer_max_score[0], last = baseline_.back().layer_max_score[0];
    QVERIFY2(last > 2 * first, qPrintable(QString("layer 0's largest score only went from %1 to %2").arg(first).arg(last)));
    threshold_ = 0.5 * (first + last);
    crossing_ = firstCrossing(baseline_, threshold_);
    QVERIFY(crossing_ > 1 && crossing_ < 60);
  }

  void theLargestScoreIsRecordedPerLayerAndStep() {
    for (const TrainPoint& p : baseline_) {
      QCOMPARE(p.layer_max_score.size(), size_t(2));
      for (double s : p.layer_max_score) QVERIFY(std::isfinite(s) && s > 0);
      QVERIFY(p.qk_guard_switched.empty());  // off by default
    }
  }

  void theGuardSwitchesExactlyAtTheFirstCrossing() {
    Trainer guarded(fastConfig(threshold_));
    const std::vector<TrainPoint> history = trainAll(guarded);
    std::vector<int> crossingLayers;
    for (int l = 0; l < 2; ++l)
      if (baseline_[crossing_ - 1].layer_max_score[l] > threshold_) crossingLayers.push_back(l);
    for (int step = 1; step <= crossing_; ++step) {  // the unguarded run, bit for bit, until the switch
      const TrainPoint &g = history[step - 1], &b = baseline_[step - 1];
      QVERIFY2(g.loss == b.loss && g.layer_max_score == b.layer_max_score, qPrintable(QString::number(step)));
      QCOMPARE(g.qk_guard_switched, step == crossing_ ? crossingLayers : std::vector<int>{});  // never below the threshold
    }
    for (int l : crossingLayers) QCOMPARE(guarded.model().config().attentionOf(l), std::string("qk_norm"));
    for (size_t i = crossing_; i < history.size(); ++i)
      for (int l : crossingLayers) {  // a layer switches once
        const std::vector<int>& later = history[i].qk_guard_switched;
        QVERIFY(std::find(later.begin(), later.end(), l) == later.end());
      }
    QVERIFY(history[crossing_].loss != baseline_[crossing_].loss);  // the next step runs qk_norm
  }

  void aSwitchedLayersScoresStayWithinTau() {
    ExperimentConfig c = fastConfig(threshold_);
    Trainer guarded(c);
    while (guarded.model().config().attentionOf(0) != "qk_norm" && guarded.model().config().attentionOf(1) != "qk_norm")
      guarded.trainStep();
    const int switched = guarded.model().config().attentionOf(0) == "qk_norm" ? 0 : 1;
    QCOMPARE(largestTau(guarded.model(), switched), static_cast<float>(threshold_));  // tau_h starts at the threshold
    while (!guarded.finished()) {
      const float tau = largestTau(guarded.model(), switched);  // the tau of the forward about to run
      const TrainPoint p = guarded.trainStep();
      QVERIFY2(p.layer_max_score[switched] <= tau * (1 + 1e-5), qPrintable(QString("step %1: |s| %2 > tau %3")
                                                                             .arg(p.step).arg(p.layer_max_score[switched]).arg(tau)));
      QVERIFY(p.layer_max_score[switched] > 0.2 * tau);  // the bound is not met trivially
    }
  }

  void aThresholdAboveEveryScoreNeverSwitches() {
    double highest = 0;
    for (const TrainPoint& p : baseline_)
      for (double s : p.layer_max_score) highest = std::max(highest, s);
    Trainer guarded(fastConfig(highest));  // equal is not above
    const std::vector<TrainPoint> history = trainAll(guarded);
    for (size_t i = 0; i < history.size(); ++i) QVERIFY(history[i].qk_guard_switched.empty() && history[i].loss == baseline_[i].loss);
    QCOMPARE(guarded.model().config().attentionOf(0), std::string("softmax"));
  }

  void aResumedGuardedRunIsTheUninterruptedOne_data() {
    QTest::addColumn<int>("stopAt");
    QTest::newRow("saved before the switch") << crossing_ - 1;
    QTest::newRow("saved after the switch") << crossing_ + 3;
  }
  void aResumedGuardedRunIsTheUninterruptedOne() {
    QFETCH(int, stopAt);
    Trainer straight(fastConfig(threshold_));
    trainAll(straight);
    QTemporaryDir dir;
    const std::string folder = dir.filePath("part").toStdString();
    {
      Trainer first(fastConfig(threshold_));
      while (first.stepsDone() < stopAt) first.trainStep();
      QCOMPARE(QString::fromStdString(saveCheckpoint(folder, first)), QString());
    }
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder, loaded)), QString());
    QCOMPARE(QString::fromStdString(loaded.notice), QString());
    QCOMPARE(loaded.trainer->history().size(), size_t(stopAt));
    if (stopAt > crossing_) QVERIFY(loaded.trainer->model().config().attentionOf(0) == "qk_norm" ||
                                    loaded.trainer->model().config().attentionOf(1) == "qk_norm");
    trainAll(*loaded.trainer);
    compareRunsExactly(straight, *loaded.trainer);
  }

  void theHistoryFileKeepsScoresAndSwitches() {
    Trainer guarded(fastConfig(threshold_));
    while (guarded.stepsDone() < crossing_ + 1) guarded.trainStep();
    QTemporaryDir dir;
    const std::string file = dir.filePath("history.csv").toStdString();
    QCOMPARE(QString::fromStdString(writeHistoryCsv(file, guarded.history())), QString());
    std::vector<TrainPoint> read;
    QCOMPARE(QString::fromStdString(readHistoryCsv(file, read)), QString());
    QCOMPARE(read.size(), guarded.history().size());
    for (size_t i = 0; i < read.size(); ++i) {
      QCOMPARE(read[i].layer_max_score, guarded.history()[i].layer_max_score);
      QCOMPARE(read[i].qk_guard_switched, guarded.history()[i].qk_guard_switched);
    }
    QVERIFY(!read[crossing_ - 1].qk_guard_switched.empty());
  }

  void aBadThresholdIsRefusedInOneLine() {
    for (double bad : {-1.0, std::nan(""), 1e9}) {
      const std::string why = validate(fastConfig(bad));
      QVERIFY2(why.find("train.qk_guard") != std::string::npos && why.find('\n') == std::string::npos, why.c_str());
    }
  }

  void theMessageNamesLayerStepAndScore() {
    QCOMPARE(QString::fromStdString(qkGuardMessage(40, 1, 52.25, 50)),
             QString("QK-guard: layer 2 at step 40 (largest score 52.25 > 50): qk_norm from step 41"));
  }
};

QTEST_APPLESS_MAIN(TestQkGuard)
#include "test_qk_guard.moc"
