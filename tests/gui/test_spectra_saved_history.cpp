// The Spectra view's history survives saving (issue 21): the trainer keeps an evenly thinned past
// of its query and key projections, the checkpoint stores it (qk_history.json and
// qk_history.safetensors), and after reopening the slider's steps and each step's spectra are those
// of the saved weights.
#include <QSlider>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "attention_map_model.h"
#include "head_selection.h"
#include "io/checkpoint.h"
#include "spectra_tab.h"
#include "spectrum_history.h"
#include "spectrum_model.h"
#include "spectrum_view.h"
#include "tiny_experiment.h"
#include "training_session.h"

using namespace attnlab;

namespace {

constexpr int kSteps = 40;

std::unique_ptr<Trainer> trained() {
  ExperimentConfig config = testing::tinyConfig(kSteps);
  config.train.threads = 1;
  config.model.positional = "rope";  // the spectra's RoPE phases come from the saved weights too
  auto trainer = std::make_unique<Trainer>(config);
  while (!trainer->finished()) trainer->trainStep();
  return trainer;
}

bool sameWeights(const ParamStore& a, const ParamStore& b) {
  if (a.all().size() != b.all().size()) return false;
  for (size_t i = 0; i < a.all().size(); ++i)
    if (a.all()[i]->name != b.all()[i]->name || a.all()[i]->value != b.all()[i]->value) return false;
  return true;
}

}  // namespace

class SpectraSavedHistoryTest : public QObject {
  Q_OBJECT
 private slots:
  void historyIsEvenlyThinned() {
    const std::unique_ptr<Trainer> trainer = trained();
    const QkWeightHistory& history = trainer->qkHistory();
    const auto& frames = history.frames();
    QVERIFY(int(frames.size()) <= QkWeightHistory::kMaxFrames);
    QVERIFY(int(frames.size()) >= QkWeightHistory::kMaxFrames / 2);
    QCOMPARE(history.stride(), 2);  // 41 steps from 0: thinned once, at step 32
    for (size_t i = 0; i < frames.size(); ++i) QCOMPARE(frames[i].step, int(i) * history.stride());
    // the last frame holds the weights of its step: the model's own at the end
    QCOMPARE(frames.back().step, kSteps);
    QVERIFY(sameWeights(*frames.back().weights, QkWeightHistory::qkTensors(trainer->model().params())));
    QVERIFY(!frames.back().weights->all().empty());
    for (const auto& p : frames.back().weights->all()) QVERIFY2(QkWeightHistory::isQkTensor(p->name), p->name.c_str());
  }

  void reopenedSliderShowsTheSavedSpectra() {
    std::unique_ptr<Trainer> trainer = trained();
    std::vector<QkWeightFrame> saved = trainer->qkHistory().frames();
    const ModelConfig config = trainer->model().config();
    QTemporaryDir dir;
    const std::string folder = dir.filePath(QStringLiteral("run")).toStdString();
    QCOMPARE(QString::fromStdString(saveCheckpoint(folder, *trainer)), QString());
    QVERIFY(std::filesystem::exists(folder + "/qk_history.json"));
    QVERIFY(std::filesystem::exists(folder + "/qk_history.safetensors"));

    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder, loaded)), QString());
    const auto& restored = loaded.trainer->qkHistory().frames();
    QCOMPARE(restored.size(), saved.size());
    QCOMPARE(loaded.trainer->qkHistory().stride(), trainer->qkHistory().stride());
    for (size_t i = 0; i < saved.size(); ++i) {
      QCOMPARE(restored[i].step, saved[i].step);
      QVERIFY(sameWeights(*restored[i].weights, *saved[i].weights));
    }

    TrainingSession session;
    AttentionMapModel attention;
    HeadSelection selection(&attention);
    connect(&session, &TrainingSession::traced, &attention, &AttentionMapModel::setTrace);
    SpectraTab tab(ViewContext{.attention = &attention, .selection = &selection, .session = &session});
    session.open(std::move(loaded.trainer));
    QTRY_VERIFY_WITH_TIMEOUT(attention.snapshot() && attention.snapshot()->step == kSteps, 20000);
    tab.waitForResults();
    SpectrumModel* model = tab.model();
    // one slider position per saved step (the last is the opened model itself, at the same step)
    QCOMPARE(model->snapshotCount(), int(saved.size()));
    QCOMPARE(tab.view()->snapshotSlider()->maximum(), int(saved.size()) - 1);
    const SpectrumSeries& series = *tab.history()->series();
    for (size_t i = 0; i < saved.size(); ++i) {
      QCOMPARE(series.snapshots[i]->step, saved[i].step);
      const SpectrumSnapshot expected = spectrumFrame(config, saved[i].step, *saved[i].weights);
      QCOMPARE(series.snapshots[i]->heads.size(), expected.heads.size());
      for (size_t h = 0; h < expected.heads.size(); ++h) {
        QCOMPARE(series.snapshots[i]->heads[h].eigenvalues, expected.heads[h].eigenvalues);
        QCOMPARE(series.snapshots[i]->heads[h].singularValues, expected.heads[h].singularValues);
      }
      tab.view()->snapshotSlider()->setValue(int(i));
      QCOMPARE(model->step(), saved[i].step);
    }
    if (const QByteArray file = qgetenv("ATTNLAB_SCREENSHOT"); !file.isEmpty()) {  // a reopened run's slider, for the eye
      tab.resize(1400, 850);
      tab.show();
      tab.view()->snapshotSlider()->setValue(int(saved.size()) / 2);
      QTest::qWait(300);
      QVERIFY(tab.grab().save(QString(file)));
    }
  }

  void damagedHistoryFilesAreRefused() {
    std::unique_ptr<Trainer> trainer = trained();
    QTemporaryDir dir;
    const std::string folder = dir.filePath(QStringLiteral("run")).toStdString();
    QCOMPARE(QString::fromStdString(saveCheckpoint(folder, *trainer)), QString());
    const auto rewrite = [&](const std::string& text) {
      std::ofstream(folder + "/qk_history.json") << text;
      LoadedCheckpoint loaded;
      return QString::fromStdString(loadCheckpoint(folder, loaded));
    };
    QVERIFY(rewrite(R"({"format": "attnlab-qk-history", "version": 1, "stride": 2, "steps": [0, 3]})").contains("not a multiple of the stride"));
    QVERIFY(rewrite(R"({"format": "attnlab-qk-history", "version": 1, "stride": 2, "steps": [0, 400]})").contains("up to the run's 40 steps"));
    QVERIFY(rewrite(R"({"format": "attnlab-qk-history", "version": 1, "stride": 2, "steps": [4, 2]})").contains("must increase"));
    QVERIFY(rewrite(R"({"format": "attnlab-qk-history", "version": 1, "stride": 2, "steps": [0, 2]})").contains("qk_history.safetensors"));
    QVERIFY(rewrite("[").contains("not a JSON object"));
    std::filesystem::remove(folder + "/qk_history.json");
    LoadedCheckpoint loaded;
    QVERIFY(QString::fromStdString(loadCheckpoint(folder, loaded)).contains("missing, though qk_history.safetensors is there"));
    std::filesystem::remove(folder + "/qk_history.safetensors");  // as saved before the history existed
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder, loaded)), QString());
    QVERIFY(loaded.trainer->qkHistory().frames().empty());
  }
};

QTEST_MAIN(SpectraSavedHistoryTest)
#include "test_spectra_saved_history.moc"
