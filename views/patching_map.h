#pragma once
// Activation patching effects as a heatmap: one row per layer, one column per position (stream
// sites), head, or head x position; red = restores the clean answer (effect 1), blue = pushes the
// other way. Hover a cell for its numbers; click it to select that layer (and head).
#include <QWidget>

#include "interpret/activation_patching.h"

namespace attnlab {

class PatchingMap : public QWidget {
  Q_OBJECT
 public:
  explicit PatchingMap(QWidget* parent = nullptr);
  // `rowLabels` name the rows (the layers, or the streams between them); `columnLabels` the
  // columns: the positions' tokens (stream sites), "H1".."H4" (per head) or "H1 tok" per head and
  // position (head-major, `positions` per head).
  void setEffects(std::vector<PatchEffect> rows, QStringList rowLabels, QStringList columnLabels, int positions);
  bool hasData() const { return !rows_.empty(); }
  const std::vector<PatchEffect>& effects() const { return rows_; }

 signals:
  void cellClicked(int layer, int head);  // head -1 for stream sites

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  QRectF gridRect() const;
  const PatchEffect* cellAt(QPointF point) const;
  int columnOf(const PatchEffect& e) const;
  QString rowLabel(int row) const;
  int leftBand() const;

  std::vector<PatchEffect> rows_;
  int layers_ = 0, columns_ = 0, positions_ = 0;
  QStringList rowLabels_, labels_;
};

}  // namespace attnlab
