#pragma once
// Asked when Train (or Save) is pressed on an opened Hugging Face model: which text the model is
// fine-tuned on (the probe text, or a chosen UTF-8 file) and for how many steps; Save asks only
// the text (a checkpoint's text task names it; 0 steps).
#include <QDialog>
#include <QString>

class QLineEdit;
class QRadioButton;
class QSpinBox;

namespace attnlab {

struct FineTuneChoice {
  bool useProbe = true;
  QString textFile;  // when !useProbe
  int steps = 0;
};

class FineTuneDialog : public QDialog {
  Q_OBJECT
 public:
  // `saving`: the Save variant (no steps). The Train variant also has a button that closes with
  // the result kTrainPanel: train the experiment panel's model instead.
  FineTuneDialog(const QString& modelName, bool saving, int defaultSteps, QWidget* parent = nullptr);
  static constexpr int kTrainPanel = 2;

  FineTuneChoice choice() const;
  QRadioButton* probeButton() const { return probe_; }
  QRadioButton* fileButton() const { return file_; }
  QLineEdit* fileField() const { return path_; }
  QSpinBox* stepsField() const { return steps_; }

 private:
  void browse();
  void updateOk();

  QRadioButton* probe_;
  QRadioButton* file_;
  QLineEdit* path_;
  QSpinBox* steps_;
  QWidget* okButton_ = nullptr;
  bool saving_;
};

}  // namespace attnlab
