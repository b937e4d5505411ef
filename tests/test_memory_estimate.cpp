// The memory estimate shown before training: parameter count and activation bytes are those of
// the model training would build, counted from shapes alone, so a model of any size is planned
// without being allocated; and the refusal, with its figures, of what does not fit.
#include <QElapsedTimer>
#include <QtTest>

#include <functional>

#include "core/available_memory.h"
#include "data/task.h"
#include "io/config_json.h"
#include "model/model.h"
#include "train/memory_estimate.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

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
      QCOMPARE(e.activationBytes, trainer.model().activationBytes(config.train.batch, e.sequenceLength, ActivationPass::training));
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

  // The figures for a small model, counted by hand: untied SwiGLU with RMSNorm and RoPE (no position
  // table, no biases), d = 8, 2 heads of 4, 2 layers, d_ff = 16, batch 3.
  void theEstimateIsTheHandCount() {
    ExperimentConfig config = preset("default");
    ModelConfig& m = config.model;
    m.d_model = 8, m.n_heads = 2, m.n_layers = 2, m.d_ff = 16, m.context = 12;
    m.mlp = "swiglu", m.norm = "rmsnorm", m.positional = "rope", m.mlp_bias = false, m.tied_embeddings = false;
    config.train.batch = 3;
    std::string error;
    const std::unique_ptr<Task> task = makeTask(config.task, error);
    QVERIFY(task);
    const size_t V = task->vocabulary().size(), T = trainingSequenceLength(config, *task), B = 3, d = 8, H = 2, ff = 16, L = 2;
    QCOMPARE(T, size_t(12));
    MemoryEstimate e;
    QCOMPARE(q(estimateMemory(config, e)), QString());
    // per layer q, k, v, o (4 d^2), SwiGLU (3 d d_ff), two norms (2 d); embedding and head 2 V d; final norm d
    const size_t parameters = L * (4 * d * d + 3 * d * ff + 2 * d) + 2 * V * d + d;
    QCOMPARE(e.parameters, parameters);
    // per block and token: 6 d of residual and norm rows, 6 H d_head of q, k, v, o and their
    // gradients, 3 d_ff of SwiGLU; per block softmax's three row figures [B, H, T] (training keeps
    // no maps); then embedding and logits rows
    const size_t perBlock = B * T * (6 * d + 6 * H * (d / H) + 3 * ff) + B * H * T * 3;
    const size_t activations = 4 * (L * perBlock + B * T * (2 * d + 2 * V));
    QCOMPARE(e.activationBytes, activations);
    // a variant that needs its maps (sigmoid) counts the two [B, H, T, T] maps instead
    ExperimentConfig withMaps = config;
    withMaps.model.attention = {"sigmoid"};
    MemoryEstimate mapped;
    QCOMPARE(q(estimateMemory(withMaps, mapped)), QString());
    QCOMPARE(mapped.activationBytes, activations + 4 * L * (B * H * T * T * 2 - B * H * T * 3));
    QCOMPARE(e.totalBytes(), double(16 * parameters + activations));  // value, gradient, m, v: 4 floats each

    const uint64_t need = 16 * parameters + activations;
    QCOMPARE(q(trainingMemoryRefusal(e, need)), QString());
    const QString why = q(trainingMemoryRefusal(e, need - 1));
    QVERIFY2(why.startsWith("this experiment needs about " + q(memoryText(double(need))) + " to train (weights, gradients and "
                            "AdamW moments " + q(memoryText(16.0 * parameters)) + ", activations " +
                            q(memoryText(double(activations))) + " at batch 3 x context 12); "),
             qPrintable(why));

    // Reading it: weights, their gradients and moments when held, keys and values of 12 tokens in both
    // layers, and one pass at batch 1.
    m.vocab = int(V);
    InferenceEstimate r;
    QCOMPARE(q(estimateInference(m, 12, true, r)), QString());
    QCOMPARE(r.parameters, parameters);
    QCOMPARE(r.weightBytes, 4.0 * parameters);
    QCOMPARE(r.heldStateBytes, 12.0 * parameters);
    QCOMPARE(r.kvCacheBytes, 4.0 * (2 * L * H * (d / H) * 12));
    QCOMPARE(r.activationBytes, 4.0 * (L * (12 * (6 * d + 6 * H * (d / H) + 3 * ff) + H * 12 * 12 * 2) + 12 * (2 * d + 2 * V)));
    const double reading = r.totalBytes();
    QCOMPARE(q(inferenceMemoryRefusal("opening this checkpoint", r, uint64_t(reading))), QString());
    QVERIFY(inferenceMemoryRefusal("opening this checkpoint", r, uint64_t(reading) - 1).find("at 12 tokens); ") != std::string::npos);
  }

  // A configuration needing a thousand times what is available, by its batch, its context or its
  // width and depth, is refused by the Trainer with the figures, before the model is allocated: in
  // well under a second, with nothing for the OOM killer to see. The figure is assumed (the
  // default preset's own need), so the test means the same on every machine.
  void aThousandTimesTooLargeIsRefusedBeforeAllocation_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("expected");
    QTest::newRow("batch") << "batch" << "at batch 1600000 x context 128";
    QTest::newRow("context") << "context" << "at batch 16 x context 8192";
    QTest::newRow("d_model and layers") << "width" << "at batch 16 x context 128";
  }

  void aThousandTimesTooLargeIsRefusedBeforeAllocation() {
    QFETCH(QString, key);
    QFETCH(QString, expected);
    ExperimentConfig config = preset("default");
    MemoryEstimate fits;
    QCOMPARE(q(estimateMemory(config, fits, ThisMachine::mayNotFit)), QString());
    const AssumedAvailableMemory available(uint64_t(fits.totalBytes()));
    { const Trainer justFits(config); }  // the boundary: the preset itself is built

    if (key == "batch") config.train.batch *= 100000;
    if (key == "context") {
      // validate()'s limit, with a variant that keeps its T x T maps: softmax trains without them,
      // so its need grows only linearly with the context (56x here)
      config.model.context = 8192;
      config.model.attention = {"sigmoid"};
    }
    if (key == "width") config.model.d_model = 4096, config.model.n_layers = 64, config.model.d_ff = 16384;
    MemoryEstimate need;
    QCOMPARE(q(estimateMemory(config, need, ThisMachine::mayNotFit)), QString());
    QVERIFY2(need.totalBytes() >= 1000 * fits.totalBytes(), qPrintable(QString::number(need.totalBytes() / fits.totalBytes())));

    QElapsedTimer clock;
    clock.start();
    QString why;
    try {
      const Trainer trainer(config);
    } catch (const ConfigError& e) {
      why = e.what();
    }
    QVERIFY2(clock.elapsed() < 300, qPrintable(QString::number(clock.elapsed()) + " ms"));
    QVERIFY2(why.startsWith("this experiment needs about " + q(memoryText(need.totalBytes())) + " to train"), qPrintable(why));
    QVERIFY2(why.contains(expected + "); " + q(memoryText(fits.totalBytes())) + " is available"), qPrintable(why));
    QVERIFY(!why.contains('\n'));
    MemoryEstimate shown;  // the panel's footer asks the same function, so it refuses with the same line
    QCOMPARE(q(estimateMemory(config, shown)), why);
  }

  // Around a model in memory already (an opened checkpoint, a fine-tune), the first step checks
  // what it adds, the activations, before allocating them; a batch that fits trains.
  void trainingOnAModelInMemoryChecksItsActivations() {
    const ExperimentConfig config = preset("default");
    const Trainer opened(config);
    ExperimentConfig huge = config;
    huge.train.batch = 100000000;
    Trainer trainingOn(huge, copyModel(opened.model()), {});
    QElapsedTimer clock;
    clock.start();
    QString why;
    try {
      trainingOn.trainStep();
    } catch (const ConfigError& e) {
      why = e.what();
    }
    QVERIFY2(clock.elapsed() < 300, qPrintable(QString::number(clock.elapsed()) + " ms"));
    QVERIFY2(why.startsWith("training on needs about 506.7 TiB more for the activations at batch 100000000 x context 128"),
             qPrintable(why));
    QCOMPARE(trainingOn.stepsDone(), 0);

    Trainer fits(config, copyModel(opened.model()), {});
    QCOMPARE(fits.trainStep().step, 1);
  }

  // MemAvailable from the kernel's text, in bytes; nothing when the line is absent (old kernels),
  // where the machine's physical memory is used instead.
  void theAvailableFigureIsReadFromMeminfo() {
    const std::string meminfo =
        "MemTotal:       24531852 kB\nMemFree:        21004840 kB\nMemAvailable:   22434560 kB\nBuffers:           12345 kB\n";
    QCOMPARE(memAvailableIn(meminfo), std::optional<uint64_t>(22434560ull * 1024));
    QCOMPARE(memAvailableIn("MemTotal:       24531852 kB\nMemFree:        21004840 kB\n"), std::optional<uint64_t>());
    QCOMPARE(memAvailableIn("MemAvailable: lots\n"), std::optional<uint64_t>());
    QCOMPARE(memAvailableIn(""), std::optional<uint64_t>());
    QVERIFY(availableMemoryBytes() > 0);
    {
      const AssumedAvailableMemory assumed(12345);
      QCOMPARE(availableMemoryBytes(), uint64_t(12345));
    }
    QVERIFY(availableMemoryBytes() != 12345);
    QCOMPARE(memoryText(21.4 * (1ull << 30)), std::string("21.4 GiB"));
    QCOMPARE(memoryText(512), std::string("512 B"));
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
