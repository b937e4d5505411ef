#pragma once
// The difference of two runs' attention maps (AttentionDifferenceModel): rows are queries,
// columns keys, red where run A attends more, blue where run B does, white where they agree;
// masked cells are grey. A legend gives the scale (the largest |A - B| on the map); a tooltip
// names the cell with both weights.
#include <QWidget>
#include <utility>

#include "view_export.h"

namespace attnlab {

class AttentionDifferenceModel;

class AttentionDifferenceView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  explicit AttentionDifferenceView(const AttentionDifferenceModel* model, QWidget* parent = nullptr);
  // Names of the two runs, for the title and legend.
  void setRunNames(const QString& a, const QString& b);

  QRect cellRect(int query, int key) const;
  QSize sizeHint() const override { return {420, 380}; }
  QSize minimumSizeHint() const override { return {220, 200}; }

  QString exportName() const override;
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  struct Geometry {
    QRect grid;
    int cell = 0;   // side of one square of the grid, pixels
    int squares = 0;     // squares per side of the grid: the map's size over block, rounded up
    int block = 1;  // cells per square's side (more than 1 when the map is larger than the room)
    int labelWidth = 0;
    int labelEvery = 1;
    QRect legendBar;
  };
  Geometry geometry() const;
  // Whether any cell of the block x block square at (query, key) is visible, and the difference
  // of largest magnitude among the visible ones.
  std::pair<bool, float> largestDifference(int query, int key, int block) const;
  QFont labelFont() const;

  const AttentionDifferenceModel* model_;
  QString nameA_ = QStringLiteral("A"), nameB_ = QStringLiteral("B");
};

}  // namespace attnlab
