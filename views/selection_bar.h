#pragma once
// The layer and head every attention view shows (the selection lives in AttentionMapModel, so
// a click in the model view moves these pickers too), the colour scale, and what is shown.
#include <QWidget>

class QComboBox;
class QLabel;
class QRadioButton;

namespace attnlab {

class AttentionMapModel;
class HeadSelection;

class SelectionBar : public QWidget {
  Q_OBJECT
 public:
  SelectionBar(AttentionMapModel* model, HeadSelection* selection, QWidget* parent = nullptr);

  QComboBox* layerPicker() const { return layerPicker_; }
  QComboBox* headPicker() const { return headPicker_; }

 private:
  void syncPickers();  // picker entries and choice follow the model
  void updateCaption();

  AttentionMapModel* model_;
  HeadSelection* selection_;
  QComboBox* layerPicker_;
  QComboBox* headPicker_;
  QRadioButton* linear_;
  QRadioButton* log_;
  QLabel* caption_;
};

}  // namespace attnlab
