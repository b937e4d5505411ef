// The memory estimate shown before training: parameter count and activation bytes are those of
// the model training would build, and the extrapolation used for very large models is exact when
// every layer is alike.
#include <QtTest>

#include "io/config_json.h"
#include "train/memory_estimate.h"
#include "train/trainer.h"

using namespace attnlab;

class MemoryEstimateTest : public QObject {
  Q_OBJECT

  static ExperimentConfig preset(const char* name) {
    ExperimentConfig c;
    if (!loadPreset(name, c).empty()) qFatal("preset %s", name);
    return c;
  }

 private slots:
  void countsWhatTrainingBuilds() {
    for (const char* name : {"default", "induction", "associative_recall"}) {
      const ExperimentConfig config = preset(name);
      MemoryEstimate e;
      QCOMPARE(QString::fromStdString(estimateMemory(config, e)), QString());
      QVERIFY(e.exact);
      const Trainer trainer(config);
      const size_t parameters = trainer.model().params().totalElements();
      QCOMPARE(e.parameters, parameters);
      QCOMPARE(e.parameterBytes, parameters * 8);  // float32 value + gradient
      QCOMPARE(e.optimizerBytes, parameters * 8);  // AdamW m and v
      QCOMPARE(e.sequenceLength, trainingSequenceLength(config, trainer.task()));
      QCOMPARE(e.activationBytes, trainer.model().activationBytes(config.train.batch, e.sequenceLength));
      QCOMPARE(e.totalBytes(), e.parameterBytes + e.optimizerBytes + e.activationBytes);
    }
  }

  void extrapolationIsExactForAlikeLayers() {
    ExperimentConfig config = preset("default");
    config.model.n_layers = 5;
    MemoryEstimate built, extrapolated;
    QVERIFY(estimateMemory(config, built).empty());
    QVERIFY(estimateMemory(config, extrapolated, 0).empty());  // never build the full model
    QVERIFY(built.exact);
    QVERIFY(!extrapolated.exact);
    QCOMPARE(extrapolated.parameters, built.parameters);
    QCOMPARE(extrapolated.activationBytes, built.activationBytes);
  }

  void anInvalidConfigurationSaysWhy() {
    ExperimentConfig config = preset("default");
    config.model.n_heads = 3;
    MemoryEstimate e;
    const QString why = QString::fromStdString(estimateMemory(config, e));
    QVERIFY2(why.contains("must divide"), qPrintable(why));
    QCOMPARE(e.parameters, size_t(0));
  }
};

QTEST_APPLESS_MAIN(MemoryEstimateTest)
#include "test_memory_estimate.moc"
