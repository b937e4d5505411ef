// The memory estimate shown before training: parameter count and activation bytes are those of
// the model training would build, counted from shapes alone, so a model of any size is planned
// without being allocated.
#include <QtTest>

#include <functional>

#include "io/config_json.h"
#include "model/model.h"
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

  // Shapes alone count what a built model holds, for every block option, and nothing is allocated.
  void shapesCountWhatAModelHolds() {
    ExperimentConfig config = preset("default");
    config.model.vocab = 50;
    for (const auto& change : std::vector<std::function<void(ModelConfig&)>>{
             [](ModelConfig&) {}, [](ModelConfig& m) { m.mlp = "swiglu"; m.norm = "rmsnorm"; },
             [](ModelConfig& m) { m.qkv_bias = true; m.out_bias = true; m.tied_embeddings = false; },
             [](ModelConfig& m) { m.attention = {"qk_norm"}; m.output_gate = "headwise"; m.retention_gate = true; },
             [](ModelConfig& m) { m.attention = {"static_map"}; m.positional = "none"; }}) {
      ModelConfig m = config.model;
      change(m);
      const Model built(m, 1);
      const auto shapes = Model::shapesOf(m);
      QCOMPARE(shapes->params().totalElements(), built.params().totalElements());
      for (const auto& p : shapes->params().all()) QCOMPARE(p->value.size(), Eigen::Index(0));
    }
  }

  // A 7B-shaped plan is counted in a moment and, for another machine, not refused; here it is.
  void aModelLargerThanThisMachineIsPlannedNotBuilt() {
    ExperimentConfig config = preset("default");
    config.model.d_model = 4096;
    config.model.n_layers = 32;
    config.model.n_heads = 32;
    config.model.d_ff = 11008;
    config.model.vocab = 32000;
    config.model.mlp = "swiglu";
    config.model.norm = "rmsnorm";
    config.model.tied_embeddings = false;
    config.model.positional = "rope";  // no position table
    config.model.mlp_bias = false;     // as Llama
    config.train.batch = 1;
    MemoryEstimate e;
    if (std::string why = validate(config); !why.empty()) QSKIP(qPrintable("the lab's limits refuse it: " + QString::fromStdString(why)));
    QVERIFY(estimateMemory(config, e, ThisMachine::mayNotFit).empty());
    // per layer 4 d^2 (q, k, v, o) + 3 d d_ff (SwiGLU) + 2 d (norms); embedding and head 2 V d; final norm d
    const size_t d = 4096, ff = 11008, V = 32000, L = 32;
    QCOMPARE(e.parameters, L * (4 * d * d + 3 * d * ff + 2 * d) + 2 * V * d + d);
    QVERIFY(!estimateMemory(config, e).empty() || e.totalBytes() < (size_t(1) << 36));  // refused unless the machine is huge
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
