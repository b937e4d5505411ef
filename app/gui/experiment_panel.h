#pragma once
// The experiment editor, docked beside the views: model shape, the attention variant of each
// layer and its settings, positional encoding, gates, projection sharing, score precision, task
// (or a text file) and training. Every picker lists an engine registry or catalogue, with each
// member's one-line formula as its tooltip. Edits are checked as they are typed by the engine's
// own validation (validate(), validateSettings()); a refused value is marked with its reason and
// nothing invalid is ever applied. Below the editors: the memory training will need.
#include <QDockWidget>
#include <QString>
#include <QStringList>
#include <vector>

#include "experiment/experiment_config.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QTimer;

namespace attnlab {

class WheelGuard;

class NumberField;
class SettingsEditor;

class ExperimentPanel : public QDockWidget {
  Q_OBJECT
 public:
  explicit ExperimentPanel(QWidget* parent = nullptr);

  // Shows `config` as the applied experiment (a preset, an opened checkpoint, the running one).
  void setAppliedConfig(const ExperimentConfig& config);
  const ExperimentConfig& appliedConfig() const { return applied_; }

  // Reads and checks the editors. Returns "" and fills `out`, or the first reason they are invalid
  // (also shown below the editors, with the fields in error marked).
  QString readConfig(ExperimentConfig& out);
  // True when the editors hold something other than the applied experiment.
  bool hasChanges();
  // Emits applyRequested with the edited experiment if it is valid, else shows why; returns which.
  bool apply();
  // Puts the applied experiment back into the editors.
  void revert();
  // Chooses the "text" task on `path` (what "Open text file..." does after its dialog).
  void setTextFile(const QString& path);
  void chooseTextFile();  // asks for the file, then setTextFile

  QString problem() const;       // the reason shown below the editors, "" when valid
  QString memoryText() const;    // the memory estimate as shown
  QString timeText() const;      // the time-per-step estimate as shown
  double secondsPerStep() const { return secondsPerStep_; }  // its value; 0 while unknown
  // Editors by config key, for tests and for focusing a field: "model.d_model",
  // "model.positional_settings.theta", ...; pickers: "model.attention" (all layers) or
  // "model.attention.<layer>", "model.positional", "task.name", "model.output_gate", ...
  NumberField* field(const QString& key) const;
  QComboBox* picker(const QString& key) const;
  QCheckBox* checkBox(const QString& key) const;

 signals:
  void applyRequested(const attnlab::ExperimentConfig& config);

 private:
  QWidget* buildModelGroup();
  QWidget* buildAttentionGroup();
  QWidget* buildPositionalGroup();
  QWidget* buildGatesGroup();
  QWidget* buildTaskGroup();
  QWidget* buildTrainingGroup();
  QWidget* buildFooter();

  NumberField* addField(QFormLayout* form, const QString& label, const QString& key, int kind, const QString& help);
  QCheckBox* addCheck(QFormLayout* form, const QString& text, const QString& key, const QString& help);
  QComboBox* makePicker(const QString& key);
  int layerPickerCount() const;
  void rebuildLayerPickers();  // after an edit of the layer count or the per-layer box
  void buildLayerPickers();    // from layerChoice_
  void refreshSettingsEditors();
  void showEditors(const ExperimentConfig& config);
  void scheduleCheck();
  void check();
  QString readEditors(ExperimentConfig& out) const;
  void markFields(const QString& reason);
  void showTimeEstimate(double flopsPerStep, int steps);  // 0 FLOPs: the settings are invalid
  bool differsFromApplied(const ExperimentConfig& edited) const;

  ExperimentConfig applied_;
  bool loading_ = false;  // showEditors is filling the widgets: edits are not the user's
  QTimer* checkTimer_;
  WheelGuard* wheelGuard_;

  QLineEdit* name_ = nullptr;
  QLabel* description_ = nullptr;
  static bool isSingleValuePicker(const QComboBox* box);
  std::vector<NumberField*> fields_;
  std::vector<QCheckBox*> checks_;
  std::vector<QComboBox*> pickers_;

  QCheckBox* perLayer_ = nullptr;
  QWidget* layerBox_ = nullptr;
  QFormLayout* layerForm_ = nullptr;
  std::vector<QComboBox*> layerPickers_;  // one, or one per layer
  bool pickersPerLayer_ = false;          // how layerPickers_ were built
  QStringList layerChoice_;               // the variants to show, by layer
  QLabel* attentionCaption_ = nullptr;
  SettingsEditor* attentionSettings_ = nullptr;
  QComboBox* positional_ = nullptr;
  QLabel* positionalCaption_ = nullptr;
  SettingsEditor* positionalSettings_ = nullptr;
  QComboBox* task_ = nullptr;
  QLabel* taskCaption_ = nullptr;
  SettingsEditor* taskSettings_ = nullptr;
  QWidget* textRow_ = nullptr;
  QLabel* textPath_ = nullptr;
  QString textFile_;

  QLabel* memory_ = nullptr;
  QLabel* time_ = nullptr;
  double secondsPerStep_ = 0;
  QLabel* problem_ = nullptr;
  QString problemText_;
  QPushButton* applyButton_ = nullptr;
  QPushButton* revertButton_ = nullptr;
};

}  // namespace attnlab
