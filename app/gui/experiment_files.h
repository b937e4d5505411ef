#pragma once
// Saving and opening experiments (checkpoint folders, io/checkpoint.h), the recent list, autosave
// during training, and the bookkeeping of trained steps not yet saved, behind the question asked
// before anything would discard them. Settings live in QSettings (files/..., autosave/...).
#include <QMessageBox>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>

#include "io/checkpoint.h"
#include "experiment/experiment_config.h"
#include "training_session.h"

class QTimer;
class QWidget;

namespace attnlab {

class ExperimentFiles : public QObject {
  Q_OBJECT
 public:
  // Answers "save the trained steps first?" with Save, Discard or Cancel.
  using Prompt = std::function<QMessageBox::StandardButton(const QString& question)>;
  // "Locate file...": the text file to read instead of `missing`, or "" to give up.
  using LocateFile = std::function<QString(const QString& missing)>;

  struct Autosave {
    bool enabled = true;
    int minutes = 5;
    QString folder;  // each experiment autosaves into <folder>/<experiment name>
  };

  // `window` parents the dialogs and message boxes.
  ExperimentFiles(TrainingSession& session, QWidget* window);

  QString currentFolder() const { return currentFolder_; }
  int trainedSteps() const { return trainedSteps_; }
  bool hasUnsavedSteps() const { return trainedSteps_ > 0 && trainedSteps_ != savedSteps_; }
  QStringList recentFolders() const;

  // A new experiment that was never saved is on display (after Apply, a preset, Reset).
  void startedNew(const QString& experimentName);
  // The experiment just opened is recovered work (an autosave after a crash): unsaved, and File >
  // Save writes it into `saveFolder` (asks where when empty).
  void markRecovered(const QString& saveFolder);

  // File > Save: into the current folder, else asks for one like Save As. While training runs,
  // the worker saves between two steps and training goes on.
  void save();
  void saveAs();
  void saveTo(const QString& dir);
  // Stops any training and saves now. Returns "" or the reason.
  QString saveAndStop(const QString& dir);

  // Reads the checkpoint folder; if it is sound, asks about unsaved steps, hands the experiment to
  // the session and emits opened(). Returns "" when opened, else the reason; a reason other than
  // the user's cancel is also shown in a message box. Nothing changes unless it opened.
  QString open(const QString& dir);
  // open() for a checkpoint already read (off the UI thread, by the run folder watcher).
  QString adopt(const QString& dir, LoadedCheckpoint loaded);
  void openWithDialog();

  // Before the current experiment is discarded ("applying the new settings", "closing"):
  // asks Save/Discard/Cancel when trained steps are unsaved; true to go ahead.
  bool confirmDiscard(const QString& action);
  void setPrompt(Prompt prompt) { prompt_ = std::move(prompt); }
  void setLocateFile(LocateFile locate) { locate_ = std::move(locate); }

  Autosave autosave() const { return autosave_; }
  void setAutosave(const Autosave& settings);  // and remembers it in QSettings
  void editAutosave();  // the settings dialog
  // Saves into the autosave folder if training has gone on since the last autosave (the timer's job).
  void autosaveNow();
  static QString defaultAutosaveFolder();
  // Where an experiment named `name` autosaves.
  QString autosaveFolderFor(const QString& name) const;

 signals:
  void opened(const attnlab::ExperimentConfig& config, const QString& dir);
  void statusMessage(const QString& text);
  void documentChanged();  // current folder, unsaved state or recent list changed
  void savedTo(const QString& dir, int step, attnlab::TrainingSession::SaveKind kind);  // a save succeeded
  void startedNewExperiment();

 private:
  void onSaved(const QString& dir, int step, const QString& error, TrainingSession::SaveKind kind);
  void useAutosave(const Autosave& settings);
  void addRecent(const QString& dir);
  void showProblem(const QString& title, const QString& text);
  QString chooseSaveFolder();
  QString openLocatingCorpus(const QString& folder, const QString& missing);

  TrainingSession& session_;
  QWidget* window_;
  Prompt prompt_;
  LocateFile locate_;
  QTimer* autosaveTimer_;
  Autosave autosave_;
  QString experimentName_;
  QString currentFolder_;
  int trainedSteps_ = 0;
  int savedSteps_ = 0;
  int autosavedSteps_ = 0;
  bool savingAndStopping_ = false;  // saveAndStop() reports errors itself
  QString lastError_;
};

}  // namespace attnlab
