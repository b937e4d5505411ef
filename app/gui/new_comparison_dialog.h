#pragma once
// Compare > New comparison: tick two to four experiments (the current one and/or presets) or
// Hugging Face model folders (Add Model Folder...).
#include <QDialog>
#include <vector>

#include "experiment/experiment_config.h"

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

 private:
  void updateButtons();

  std::vector<ExperimentConfig> configs_;  // one per list row
  QStringList folders_;                    // one per list row: "" for an experiment
  QListWidget* list_;
  QLabel* hint_;
  QDialogButtonBox* buttons_;
};

}  // namespace attnlab
