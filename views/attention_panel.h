#pragma once
// The attention heatmap with its layer and head pickers and a caption saying what is shown.
#include <QWidget>

class QComboBox;
class QLabel;

namespace attnlab {

class AttentionMapModel;
class AttentionHeatmapView;

class AttentionPanel : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionPanel(AttentionMapModel* model, QWidget* parent = nullptr);

  AttentionHeatmapView* heatmap() const { return heatmap_; }

 private:
  void syncPickers();  // picker entries and choice follow the model
  void updateCaption();

  AttentionMapModel* model_;
  QComboBox* layerPicker_;
  QComboBox* headPicker_;
  QLabel* caption_;
  AttentionHeatmapView* heatmap_;
};

}  // namespace attnlab
