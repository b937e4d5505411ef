#include "model_fine_tuner.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QWidget>

#include "background_job.h"
#include "hf/hf_finetune.h"
#include "model_opener.h"
#include "tokenizer/tokenizer.h"
#include "training_session.h"

namespace attnlab {

ModelFineTuner::ModelFineTuner(TrainingSession& session, std::function<std::vector<int>()> probe, QWidget* window)
    : QObject(window), session_(session), probe_(std::move(probe)), window_(window), job_(new BackgroundJob(this)) {
  connect(job_, &BackgroundJob::failed, this, &ModelFineTuner::refused);
}

ModelFineTuner::~ModelFineTuner() = default;

bool ModelFineTuner::busy() const { return job_->busy(); }
void ModelFineTuner::waitForIdle() { job_->waitForIdle(); }

void ModelFineTuner::remember(const OpenedHfModel& opened) {
  info_ = opened.info;
  vocabulary_ = opened.vocabulary;
  captionName_ = ModelOpener::name(opened).toStdString();
  name_ = ModelOpener::describe(opened).section(QStringLiteral(" \u00b7 "), 0, 0);
}

bool ModelFineTuner::train(int pauseAtStep) {
  bool trainPanel = false;
  const std::optional<FineTuneChoice> choice = askUser(false, trainPanel);
  if (trainPanel) return false;
  if (choice) begin(*choice, pauseAtStep);
  return true;
}

void ModelFineTuner::save() {
  bool trainPanel = false;
  std::optional<FineTuneChoice> choice = askUser(true, trainPanel);
  if (!choice) return;
  choice->steps = 0;
  begin(*choice, 0);
}

std::optional<FineTuneChoice> ModelFineTuner::askUser(bool saving, bool& trainPanel) {
  if (ask_) return ask_(saving, trainPanel);
  FineTuneDialog dialog(name_, saving, kDefaultSteps, window_);
  const int result = dialog.exec();
  trainPanel = result == FineTuneDialog::kTrainPanel;
  if (result != QDialog::Accepted) return std::nullopt;
  return dialog.choice();
}

// The chosen file, or the probe text repeated into a file of the app's data folder (a checkpoint's
// text task names its file, so it must outlive this session).
QString ModelFineTuner::textPathFor(const FineTuneChoice& choice, QString& error) const {
  if (!choice.useProbe) return choice.textFile;
  const Tokenizer* tokenizer = vocabulary_ ? vocabulary_->tokenizer() : nullptr;
  if (!tokenizer) {
    error = tr("The model's folder has no tokenizer, so there is no probe text; choose a text file.");
    return {};
  }
  std::string text;
  if (const std::string why = tokenizer->decode(probe_(), text); !why.empty() || text.empty()) {
    error = tr("The probe cannot be read as text (%1); choose a text file.").arg(QString::fromStdString(why));
    return {};
  }
  std::string repeated;
  while (repeated.size() < kProbeTextCharacters) repeated += text + "\n";
  const QString folder = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/fine-tune");
  const QString path = folder + QStringLiteral("/probe-%1.txt").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss-zzz")));
  QFile file(path);
  if (!QDir().mkpath(folder) || !file.open(QIODevice::WriteOnly) ||
      file.write(repeated.data(), static_cast<qint64>(repeated.size())) != static_cast<qint64>(repeated.size())) {
    error = tr("Cannot write the probe text to %1").arg(QDir::toNativeSeparators(path));
    return {};
  }
  return path;
}

void ModelFineTuner::begin(const FineTuneChoice& choice, int pauseAtStep) {
  QString error;
  const QString text = textPathFor(choice, error);
  if (!error.isEmpty()) {
    emit refused(error);
    return;
  }
  const ExperimentConfig config = hf::fineTuneExperiment(info_, text.toStdString(), choice.steps);
  const std::vector<int> probe = probe_();
  auto model = std::make_shared<std::unique_ptr<Model>>(session_.takeOpenedModel());
  if (!*model) {
    emit refused(tr("There is no opened model to fine-tune."));
    return;
  }
  job_->submit([this, model, config, probe, pauseAtStep]() -> BackgroundJob::Delivery {
    auto trainer = std::make_shared<std::unique_ptr<Trainer>>();
    const std::string why = hf::makeFineTuner(*model, config, *trainer);
    return [this, model, trainer, config, probe, pauseAtStep, why] {
      if (!why.empty()) {
        if (*model) session_.openModel(std::move(*model), vocabulary_, probe, captionName_);  // as it was
        else session_.reset();  // the trainer failed after taking it (hf_finetune.h): open the folder again
        emit refused(QString::fromStdString(why));
        return;
      }
      session_.open(std::move(*trainer));
      if (!probe.empty()) session_.setProbe(probe);
      emit started(config);
      if (config.train.steps == 0) {
        emit readyToSave();
        return;
      }
      session_.setPauseAtStep(pauseAtStep);
      session_.resume();
    };
  });
}

}  // namespace attnlab
