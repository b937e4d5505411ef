// The thread governor against step times with a known answer: it keeps the configured count while
// that is faster, moves to one thread when a loaded machine makes one faster (found by its
// periodic probe), and back when the load goes; one configured thread is never probed. A trainer
// at 2 threads gives the weights a 1-thread trainer gives.
#include <QtTest>

#include "io/config_json.h"
#include "train/thread_governor.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
// Runs `steps` steps whose time at one thread is `one` and at two `two`; returns the counts used.
std::vector<int> run(ThreadGovernor& governor, int steps, double one, double two) {
  std::vector<int> used;
  for (int i = 0; i < steps; ++i) {
    const int t = governor.next();
    used.push_back(t);
    governor.record(t, t == 1 ? one : two);
  }
  return used;
}

long countOf(const std::vector<int>& used, int threads) { return std::count(used.begin(), used.end(), threads); }
}  // namespace

class TestThreadGovernor : public QObject {
  Q_OBJECT
 private slots:
  void keepsTheFasterCountAndProbesTheOther() {
    ThreadGovernor g(2);
    const std::vector<int> idle = run(g, 4 * ThreadGovernor::kProbeEvery, 1.0, 0.6);
    QCOMPARE(countOf(idle, 1), 4L);  // one probe per kProbeEvery steps
    QCOMPARE(idle[ThreadGovernor::kProbeEvery - 1], 1);
    QCOMPARE(g.current(), 2);
  }

  void movesToOneThreadUnderLoadAndBack() {
    ThreadGovernor g(2);
    run(g, ThreadGovernor::kProbeEvery, 1.0, 0.6);
    // Busy: two threads now take 1.5. The running time passes 1.0 within a few steps, and the
    // next probe of one thread finds it faster.
    const std::vector<int> busy = run(g, 3 * ThreadGovernor::kProbeEvery, 1.0, 1.5);
    QCOMPARE(g.current(), 1);
    QVERIFY(countOf(busy, 1) >= 2 * ThreadGovernor::kProbeEvery);
    // Idle again: a probe of two threads finds them faster.
    const std::vector<int> idle = run(g, 2 * ThreadGovernor::kProbeEvery, 1.0, 0.6);
    QCOMPARE(g.current(), 2);
    QVERIFY(countOf(idle, 2) >= ThreadGovernor::kProbeEvery);
  }

  void oneConfiguredThreadIsNeverProbed() {
    ThreadGovernor g(1);
    QCOMPARE(countOf(run(g, 3 * ThreadGovernor::kProbeEvery, 2.0, 1.0), 1), 3 * ThreadGovernor::kProbeEvery);
  }

  void theWeightsDoNotDependOnTheCount() {
    auto trained = [](int threads) {
      ExperimentConfig c;
      if (!loadPreset("default", c).empty()) qFatal("default preset");
      for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.context=64", "train.batch=8", "train.eval_every=0"})
        if (!applyOverride(c, o).empty()) qFatal("override %s", o);
      c.train.threads = threads;
      Trainer t(c);
      for (int i = 0; i < ThreadGovernor::kProbeEvery + 2; ++i) t.trainStep();  // past a probe step
      std::vector<float> values;
      for (const auto& p : t.model().params().all()) values.insert(values.end(), p->value.data(), p->value.data() + p->value.size());
      return values;
    };
    QVERIFY(trained(2) == trained(1));
  }
};

QTEST_APPLESS_MAIN(TestThreadGovernor)
#include "test_thread_governor.moc"
