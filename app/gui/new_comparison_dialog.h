#pragma once
// Compare > New comparison: tick two to four experiments (the current one and/or presets).
#include <QDialog>
#include <vector>

#include "model/config.h"

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

 private:
  void updateButtons();

  std::vector<ExperimentConfig> configs_;  // one per list row
  QListWidget* list_;
  QLabel* hint_;
  QDialogButtonBox* buttons_;
};

}  // namespace attnlab
