#pragma once
// Compare > New comparison: tick two to four experiments (the current one and/or presets), saved
// experiments (Add Saved Experiment..., with their trained weights) or Hugging Face model folders
// (Add Model Folder...).
#include <QDialog>
#include <memory>
#include <vector>

#include "experiment/experiment_config.h"
#include "train/trainer.h"

class QDialogButtonBox;
class QLabel;
class QListWidget;

namespace attnlab {

class NewComparisonDialog : public QDialog {
  Q_OBJECT
 public:
  // `current` (the main window's experiment) is offered first, ticked.
  NewComparisonDialog(const ExperimentConfig& current, QWidget* parent = nullptr);

  QListWidget* list() const { return list_; }
  std::vector<ExperimentConfig> chosen() const;  // in list order
  QStringList chosenFolders() const;              // one per chosen(): its model folder, or ""
  // Adds a model folder to the list, ticked (Add Model Folder... asks for one).
  void addModelFolder(const QString& dir);
  // Loads a saved experiment folder (as File > Open reads it) and adds it to the list, ticked;
  // "" or the one-line reason, and then the list is unchanged (Add Saved Experiment... asks for one).
  QString addSavedExperiment(const QString& dir);
  // One per chosen(): the saved run's trainer (weights, history, step), or null to train afresh.
  // Moves them out, so call it once, when the dialog is accepted.
  std::vector<std::unique_ptr<Trainer>> takeChosenTrainers();

 private:
  void updateButtons();
  void addSavedWithDialog();

  std::vector<ExperimentConfig> configs_;  // one per list row
  QStringList folders_;                    // one per list row: "" for an experiment
  std::vector<std::unique_ptr<Trainer>> trainers_;  // one per list row: null unless a saved experiment
  QListWidget* list_;
  QLabel* hint_;
  QDialogButtonBox* buttons_;
};

}  // namespace attnlab
