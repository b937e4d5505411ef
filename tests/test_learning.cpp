// Learning checks: small models must really learn their tasks on 2 cores in minutes.
// Each starts from a shipped preset so the presets a user picks are the ones verified here.
#include <QtTest>

#include <chrono>
#include <cmath>

#include "data/corpus_stats.h"
#include "io/config_json.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
ExperimentConfig preset(const char* name, std::initializer_list<const char*> overrides) {
  ExperimentConfig c;
  const std::string why = loadPreset(name, c);
  if (!why.empty()) qFatal("%s", why.c_str());
  for (const char* o : overrides)
    if (std::string bad = applyOverride(c, o); !bad.empty()) qFatal("%s", bad.c_str());
  return c;
}

EvalResult trainToEnd(Trainer& t) {
  const auto start = std::chrono::steady_clock::now();
  while (!t.finished()) t.trainStep();
  const EvalResult r = t.evaluate(16);
  qInfo("%s: %d steps in %.1f s, validation loss %.4f, accuracy %.4f, exact match %.4f", t.config().name.c_str(),
        t.stepsDone(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), r.loss,
        r.accuracy, r.exact_match);
  return r;
}
}  // namespace

class TestLearning : public QObject {
  Q_OBJECT

 private slots:
  // A 2-layer softmax + RoPE model finds the induction solution: >= 99% on the repeated half.
  void inductionHeads() {
    Trainer t(preset("induction", {}));
    QCOMPARE(t.config().model.n_layers, 2);
    QCOMPARE(t.config().model.positional, std::string("rope"));
    const EvalResult r = trainToEnd(t);
    QVERIFY2(r.accuracy >= 0.99, qPrintable(QString("induction accuracy %1").arg(r.accuracy)));
  }

  void associativeRecall() {
    Trainer t(preset("associative_recall", {}));
    QCOMPARE(t.config().model.n_layers, 2);
    const EvalResult r = trainToEnd(t);
    QVERIFY2(r.accuracy >= 0.95, qPrintable(QString("recall accuracy %1").arg(r.accuracy)));
  }

  // On the toy language, validation loss ends clearly below the corpus' unigram entropy.
  void toyLanguageBeatsUnigram() {
    Trainer t(preset("toy_language", {"model.d_model=64", "model.n_layers=2", "model.d_ff=256", "model.context=64",
                                      "train.steps=400", "train.batch=16", "train.warmup=20"}));
    Rng rng(13);
    const double unigram = unigramEntropy(t.task(), 64, 64, rng);
    const EvalResult r = trainToEnd(t);
    qInfo("toy language: unigram entropy %.3f nats, validation loss %.3f", unigram, r.loss);
    QVERIFY2(r.loss < unigram - 0.5, qPrintable(QString("loss %1 vs unigram %2").arg(r.loss).arg(unigram)));
  }
};

QTEST_APPLESS_MAIN(TestLearning)
#include "test_learning.moc"
