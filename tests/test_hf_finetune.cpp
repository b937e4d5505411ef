// Fine-tuning opened Hugging Face models (hf/hf_finetune.h): finite-difference gradients of every
// parameter tensor of a tiny random model of each architecture, opened from its folder; two
// fine-tuning steps on a text file read with the model's own tokenizer, saved as a lab checkpoint
// that opens with the same weights, and exported back to the folder's layout with the same logits;
// the memory estimates of reading and of training.
#include <QtTest>

#include "grad_check.h"
#include "hf/hf_finetune.h"
#include "hf_support.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "tokenizer/tokenizer.h"
#include "train/memory_estimate.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const fs::path& root() {
  static const fs::path dir = fs::temp_directory_path() / ("attnlab_hf_finetune_" + std::to_string(::getpid()));
  return dir;
}

std::unique_ptr<Model> openTiny(const TinyArchitecture& arch, hf::HfModelInfo& info) {
  const fs::path dir = root() / arch.label;
  const std::string written = writeTinyFolder(arch, dir);
  if (!written.empty()) qFatal("%s: %s", arch.label, written.c_str());
  std::unique_ptr<Model> model;
  const std::string opened = hf::openHfModel(dir.string(), model, info);
  if (!opened.empty()) qFatal("%s: %s", arch.label, opened.c_str());
  return model;
}

double maxRelativeDifference(const Mat& a, const Mat& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1e-30f, b.cwiseAbs().maxCoeff());
}

const std::vector<int> kProbe = {5, 256, 258, 40, 261, 7, 100, 33, 259};

}  // namespace

class TestHfFinetune : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    fs::create_directories(root());
    writeTextFile(root() / "text.txt", fineTuneText());
  }
  void cleanupTestCase() { fs::remove_all(root()); }

  // Every parameter tensor of each architecture, as the loader fills it from the folder.
  void gradientsOfEachArchitectureMatchFiniteDifferences() {
    for (const TinyArchitecture& arch : tinyArchitectures()) {
      hf::HfModelInfo info;
      std::unique_ptr<Model> model = openTiny(arch, info);
      QVERIFY2(model->params().all().size() >= 10, arch.label);
      // Without rotary (GPT-2) the key bias adds the same q.b to every score of a query: no gradient.
      const bool rotary = model->config().positional != "learned";
      checkGradients(*model, randomCase(model->config(), 2, 7, 11), arch.label, 1e-2, 40, {},
                     [&](const std::string& name) { return !rotary && name.find("attn.wk.bias") != std::string::npos; });
    }
  }

  // An opened model holds only its weights; gradients come with training.
  void readingCountsWeightsAndActivationsTrainingAlsoGradientsAndMoments() {
    hf::HfModelInfo info;
    std::unique_ptr<Model> model = openTiny(tinyArchitectures()[2], info);
    for (const auto& p : model->params().all()) QVERIFY2(p->grad.size() == 0, p->name.c_str());
    const uint64_t weights = model->params().totalElements() * sizeof(float);
    QCOMPARE(hf::parameterCount(info.config), static_cast<uint64_t>(model->params().totalElements()));
    InferenceEstimate reading;
    QCOMPARE(QString::fromStdString(estimateInference(info.config, 32, false, reading)), QString());
    QCOMPARE(reading.weightBytes + reading.activationBytes, double(weights + activationBytes(info.config, 1, 32)));
    QCOMPARE(reading.heldStateBytes, 0.0);
    QVERIFY(reading.kvCacheBytes > 0);  // and the keys and values of the tokens read
    MemoryEstimate training;
    QCOMPARE(QString::fromStdString(estimateTraining(info.config, 4, 32, training)), QString());
    QCOMPARE(training.totalBytes(), double(4 * weights + activationBytes(info.config, 4, 32, ActivationPass::training)));
    QVERIFY(activationBytes(info.config, 4, 32) > activationBytes(info.config, 1, 32));
    QCOMPARE(activationBytes(info.config, 3, 9), model->activationBytes(3, 9));
  }

  // A forward for reading only (Workspace::inference) gives the same logits and keeps no block activations.
  void inferenceForwardKeepsOnlyTheLogits() {
    hf::HfModelInfo info;
    std::unique_ptr<Model> model = openTiny(tinyArchitectures()[4], info);
    auto ws = makeWorkspace();
    ws->inference = true;
    const std::vector<int> targets(kProbe.size(), -1);
    model->forward(*ws, kProbe.data(), targets.data(), 1, static_cast<int>(kProbe.size()));
    QVERIFY(workspaceLogits(*ws) == logitsOf(*model, kProbe));
    for (const BlockActs& a : ws->blocks) QVERIFY(a.x.size() == 0 && a.ln1.size() == 0 && a.mlp_out.size() == 0);
    QCOMPARE(ws->probs.size(), Eigen::Index(0));
  }

  // open -> fine-tune 2 steps -> checkpoint -> load: same logits; -> export-hf -> open: same logits.
  void fineTunedModelSavesAsCheckpointAndExportsBack() {
    for (const TinyArchitecture& arch : tinyArchitectures()) {
      const std::string label = arch.label;
      hf::HfModelInfo info;
      std::unique_ptr<Model> model = openTiny(arch, info);
      const Mat before = logitsOf(*model, kProbe);
      ExperimentConfig config = hf::fineTuneExperiment(info, (root() / "text.txt").string(), 2);
      config.task.seq_len = 16;
      config.train.threads = 1;
      config.train.lr = 1e-2;
      std::unique_ptr<Trainer> trainer;
      QCOMPARE(QString::fromStdString(hf::makeFineTuner(model, config, trainer)), QString());
      QVERIFY(!model);
      // The task reads the file through the folder's tokenizer: merged tokens occur, ids fit the model.
      QCOMPARE(trainer->task().vocabulary().size(), info.config.vocab);
      QCOMPARE(trainer->task().vocabulary().tokenizer()->spec().vocab[258], std::string("Ġthe"));
      for (int step = 0; step < 2; ++step) QVERIFY(std::isfinite(trainer->trainStep().loss));
      const Mat tuned = logitsOf(trainer->model(), kProbe);
      QVERIFY2(maxRelativeDifference(tuned, before) > 1e-3, label.c_str());  // the weights moved

      const fs::path checkpoint = root() / (label + "_checkpoint");
      QCOMPARE(QString::fromStdString(saveCheckpoint(checkpoint.string(), *trainer)), QString());
      LoadedCheckpoint loaded;
      QCOMPARE(QString::fromStdString(loadCheckpoint(checkpoint.string(), loaded)), QString());
      QCOMPARE(loaded.trainer->stepsDone(), 2);
      QCOMPARE(loaded.config.task.tokenizer, (checkpoint / "pretrained").string());  // its own copy of the folder's description
      QVERIFY2(logitsOf(loaded.trainer->model(), kProbe) == tuned, label.c_str());

      hf::HfModelInfo origin;
      QCOMPARE(QString::fromStdString(hf::pretrainedOrigin(loaded.config, origin)), QString());
      QCOMPARE(origin.tensor_names, info.tensor_names);
      const fs::path exported = root() / (label + "_exported");
      QCOMPARE(QString::fromStdString(hf::exportHfModel(loaded.trainer->model(), origin, exported.string())), QString());
      QVERIFY(fs::exists(exported / "vocab.json") && fs::exists(exported / "merges.txt"));
      std::unique_ptr<Model> reopened;
      hf::HfModelInfo reopenedInfo;
      QCOMPARE(QString::fromStdString(hf::openHfModel(exported.string(), reopened, reopenedInfo)), QString());
      QCOMPARE(reopenedInfo.tensor_names, info.tensor_names);  // the layout it came from
      QVERIFY2(maxRelativeDifference(logitsOf(*reopened, kProbe), tuned) < 1e-6, label.c_str());
    }
  }

  // A pretrained model keeps its sizes: the lab's caps do not refuse it, and 0 steps is a checkpoint as it is.
  void pretrainedSizesAndZeroStepsValidate() {
    hf::HfModelInfo info;
    openTiny(tinyArchitectures()[0], info);
    ExperimentConfig config = hf::fineTuneExperiment(info, (root() / "text.txt").string(), 0);
    config.model.context = 131072;
    QCOMPARE(QString::fromStdString(validate(config)), QString());
    config.task.tokenizer.clear();
    QVERIFY(validate(config).find("larger than this lab supports") != std::string::npos ||
            validate(config).find("train.steps") != std::string::npos);
  }

  void badFineTuningIsRefusedInOneLine() {
    hf::HfModelInfo info;
    std::unique_ptr<Model> model = openTiny(tinyArchitectures()[2], info);
    std::unique_ptr<Trainer> trainer;
    ExperimentConfig config = hf::fineTuneExperiment(info, (root() / "missing.txt").string(), 2);
    std::string why = hf::makeFineTuner(model, config, trainer);
    QVERIFY2(why.find("no such file") != std::string::npos, why.c_str());
    QVERIFY(model && !trainer);  // the model stays with the caller

    config = hf::fineTuneExperiment(info, (root() / "text.txt").string(), 2);
    config.task.tokenizer = (root() / "nowhere").string();
    why = hf::makeFineTuner(model, config, trainer);
    QVERIFY2(why.find("tokenizer") != std::string::npos && why.find('\n') == std::string::npos, why.c_str());

    config = hf::fineTuneExperiment(info, (root() / "text.txt").string(), 2);
    config.model.d_ff += 8;
    why = hf::makeFineTuner(model, config, trainer);
    QVERIFY2(why.find("differ") != std::string::npos, why.c_str());

    config = hf::fineTuneExperiment(info, (root() / "text.txt").string(), 2);
    config.task.settings["bpe_vocab"] = 300;
    why = hf::makeFineTuner(model, config, trainer);
    QVERIFY2(why.find("exclude each other") != std::string::npos, why.c_str());
  }
};

QTEST_GUILESS_MAIN(TestHfFinetune)
#include "test_hf_finetune.moc"
