#pragma once
// Train and Save for an opened Hugging Face model (hf/hf_finetune.h): asks which text (the probe
// text or a file) and, for Train, how many steps; takes the model from the session, builds the
// fine-tuning trainer on a worker (the text is tokenized, AdamW's moments allocated), and hands it
// to the session, which trains it (Train) or holds it for File > Save (Save: 0 steps, then the
// save dialog). A refusal (text too short, not enough memory) puts the opened model back.
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tokenizer/vocabulary.h"
#include "fine_tune_dialog.h"
#include "hf/hf_model.h"
#include "experiment/experiment_config.h"

class QWidget;

namespace attnlab {

class BackgroundJob;
class TrainingSession;
struct OpenedHfModel;

class ModelFineTuner : public QObject {
  Q_OBJECT
 public:
  static constexpr int kDefaultSteps = 100;
  static constexpr int kProbeTextCharacters = 4000;  // the probe text repeats to at least this length

  // `probe` gives the ids the views show now (the probe text's source).
  ModelFineTuner(TrainingSession& session, std::function<std::vector<int>()> probe, QWidget* window);
  ~ModelFineTuner() override;

  // The model the session has just opened (before it moves into the session).
  void remember(const OpenedHfModel& opened);

  // Train pressed with an opened model: asks, then fine-tunes, pausing after `pauseAtStep` steps
  // when that is positive. Returns false when the user chose to train the panel's experiment instead.
  bool train(int pauseAtStep);
  // Save pressed with an opened model: asks for the text, then readyToSave() once the session
  // holds the checkpoint's trainer.
  void save();
  bool busy() const;
  void waitForIdle();  // for tests

  // How the dialog is answered; tests replace it. nullopt: cancelled; useProbe/textFile/steps as chosen.
  // `trainPanel` is set when the user picked the panel's experiment instead.
  using Ask = std::function<std::optional<FineTuneChoice>(bool saving, bool& trainPanel)>;
  void setAsk(Ask ask) { ask_ = std::move(ask); }

 signals:
  // The session holds the fine-tuning trainer of `config` (training already when steps > 0).
  void started(const attnlab::ExperimentConfig& config);
  void readyToSave();
  void refused(const QString& message);

 private:
  std::optional<FineTuneChoice> askUser(bool saving, bool& trainPanel);
  QString textPathFor(const FineTuneChoice& choice, QString& error) const;
  void begin(const FineTuneChoice& choice, int pauseAtStep);

  TrainingSession& session_;
  std::function<std::vector<int>()> probe_;
  QWidget* window_;
  BackgroundJob* job_;
  Ask ask_;
  hf::HfModelInfo info_;
  std::shared_ptr<const Vocabulary> vocabulary_;
  std::string captionName_;  // what captions call the opened model
  QString name_;
};

}  // namespace attnlab
