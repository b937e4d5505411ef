#pragma once
// The 3D query-key embedding with its settings (colour by position, token or role; k of the
// top-k lines), a caption (head, point counts, the q.k vs distance correlation), the colour key,
// and a line naming the point under the pointer or the selected query.
#include <QWidget>

class QComboBox;
class QLabel;
class QSpinBox;

namespace attnlab {

class QkEmbeddingModel;
class QkEmbeddingView;

class QkEmbeddingPanel : public QWidget {
  Q_OBJECT
 public:
  explicit QkEmbeddingPanel(QkEmbeddingModel* model, QWidget* parent = nullptr);

  QkEmbeddingView* view() const { return view_; }

 private:
  void updateCaption();
  void updateLegend();
  void updateStatus(const QString& hovered);

  QkEmbeddingModel* model_;
  QComboBox* colorPicker_;
  QSpinBox* topK_;
  QLabel* caption_;
  QLabel* legend_;
  QLabel* status_;
  QkEmbeddingView* view_;
};

}  // namespace attnlab
