// The trainer: determinism for a seed and thread count, the learning-rate schedule, and
// divergence reported with the step and the tensor, weights left as they were.
#include <QtTest>

#include <cmath>

#include "train/trainer.h"

using namespace attnlab;

namespace {
ExperimentConfig tinyCopy(int threads = 2) {
  ExperimentConfig c;
  c.task.name = "copy";
  c.model.d_model = 16;
  c.model.n_layers = 2;
  c.model.n_heads = 2;
  c.model.d_ff = 32;
  c.model.context = 24;
  c.model.positional = "rope";
  c.train.steps = 40;
  c.train.batch = 4;
  c.train.warmup = 5;
  c.train.eval_every = 0;
  c.train.threads = threads;
  return c;
}
}  // namespace

class TestTraining : public QObject {
  Q_OBJECT

 private slots:
  void deterministicForSeedAndThreads() {
    for (int threads : {1, 2}) {
      Trainer a(tinyCopy(threads)), b(tinyCopy(threads));
      for (int i = 0; i < 5; ++i) QCOMPARE(a.trainStep().loss, b.trainStep().loss);
      for (size_t i = 0; i < a.model().params().all().size(); ++i)
        QVERIFY(a.model().params().all()[i]->value == b.model().params().all()[i]->value);
    }
    ExperimentConfig other = tinyCopy();
    other.train.seed = 2;
    Trainer a(tinyCopy()), c(other);
    QVERIFY(a.trainStep().loss != c.trainStep().loss);
  }

  void lossFallsOnTheToyLanguage() {
    ExperimentConfig c = tinyCopy();
    c.task.name = "toy_language";
    c.train.lr = 1e-2;
    Trainer t(c);
    const double first = t.trainStep().loss;
    double last = first;
    while (!t.finished()) last = t.trainStep().loss;
    QVERIFY2(last < first * 0.9, qPrintable(QString("loss %1 -> %2").arg(first).arg(last)));
    QCOMPARE(static_cast<int>(t.history().size()), 40);
    QVERIFY(!std::isnan(t.history().back().val_loss));  // evaluated at the end
  }

  void warmupThenCosine() {
    ExperimentConfig c = tinyCopy();
    c.train.lr = 1e-2;
    c.train.warmup = 10;
    c.train.steps = 110;
    c.train.min_lr_ratio = 0.1;
    Trainer t(c);
    QVERIFY(std::abs(t.learningRate(0) - 1e-3) < 1e-12);   // 1/10 of the peak on the first step
    QVERIFY(std::abs(t.learningRate(9) - 1e-2) < 1e-12);   // peak at the end of warmup
    QVERIFY(std::abs(t.learningRate(60) - 5.5e-3) < 1e-9);  // half-way through the cosine
    QVERIFY(std::abs(t.learningRate(110) - 1e-3) < 1e-12);  // floor
  }

  void divergenceNamesStepAndTensorAndKeepsWeights() {
    Trainer t(tinyCopy());
    t.trainStep();
    Param* wq = t.model().params().find("blocks.1.attn.wq.weight");
    QVERIFY(wq);
    wq->value(0, 0) = std::numeric_limits<float>::quiet_NaN();
    const Mat before = t.model().params().find("tok_emb.weight")->value;
    try {
      t.trainStep();
      QFAIL("a NaN weight must stop training");
    } catch (const DivergenceError& e) {
      const QString why = e.what();
      QVERIFY2(why.contains("step 2") && why.contains("blocks.1.attn.wq.weight"), qPrintable(why));
    }
    QVERIFY(t.model().params().find("tok_emb.weight")->value == before);
    QCOMPARE(t.stepsDone(), 1);
  }

  void invalidConfigsAreRefusedWithAReason() {
    auto refused = [](ExperimentConfig c, const char* expected) {
      try {
        Trainer t(c);
      } catch (const ConfigError& e) {
        return QString(e.what()).contains(expected);
      }
      return false;
    };
    ExperimentConfig c = tinyCopy();
    c.model.n_heads = 3;
    QVERIFY(refused(c, "must divide"));
    c = tinyCopy();
    c.model.attention = {"no_such_variant"};
    QVERIFY(refused(c, "unknown attention variant"));
    c = tinyCopy();
    c.model.positional = "nope";
    QVERIFY(refused(c, "unknown positional encoding"));
    c = tinyCopy();
    c.model.positional_settings["theta"] = -1;
    QVERIFY(refused(c, "theta"));
    c = tinyCopy();
    c.task.name = "nonexistent";
    QVERIFY(refused(c, "nonexistent"));
  }

  void traceCoversEveryLayerAndHead() {
    Trainer t(tinyCopy());
    const auto probe = t.probeTokens();
    QVERIFY(!probe.empty());
    QCOMPARE(t.probeTokens(), probe);  // same probe every call
    const Trace trace = t.trace(probe);
    QCOMPARE(static_cast<int>(trace.layers.size()), 2);
    QCOMPARE(static_cast<int>(trace.layers[0].heads.size()), 2);
    QCOMPARE(static_cast<int>(trace.labels.size()), static_cast<int>(probe.size()));
    QCOMPARE(static_cast<int>(trace.layers[1].heads[1].weights.rows()), static_cast<int>(probe.size()));
    QCOMPARE(static_cast<int>(trace.logits.rows()), static_cast<int>(probe.size()));
  }
};

QTEST_APPLESS_MAIN(TestTraining)
#include "test_training.moc"
