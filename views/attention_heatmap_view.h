#pragma once
// One attention map drawn as a grid: row = query position, column = key position, colour =
// weight on the ramp of colormap.h (scaled to the map's largest weight, shown in the legend).
// Masked cells (keys the query cannot see, score -inf) are hatched grey, so they never look like
// a weight of zero; keys a KV-cache policy evicted carry a red cross. Token labels run down the
// left and up the top (elided when long, thinned when cells are small); a tooltip names the cell.
#include <QWidget>

#include "view_context.h"
#include "view_export.h"

namespace attnlab {

class AttentionMapModel;
class HeadMap;
class HeadSelection;
class SharedColourScale;

class AttentionHeatmapView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  explicit AttentionHeatmapView(const ViewContext& context, QWidget* parent = nullptr);

  // Where a cell is drawn, in widget coordinates (empty when there is no map). For tests and tooltips.
  QRect cellRect(int query, int key) const;
  // The weight the top of the colour ramp stands for: the map's largest, or the comparison's.
  double colourTop() const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  // Each weight written in its cell (two decimals) where the cell is wide enough: presenter mode,
  // where a class cannot hover. cellText() is what a cell shows ("" when nothing fits or is shown).
  void setValuesShown(bool on);
  bool valuesShown() const { return valuesShown_; }
  QString cellText(int query, int key) const;

  QString exportName() const override;
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;  // a row selects its query

 private:
  struct Geometry {
    QRect grid;          // all cells
    int cell = 0;        // side of one pixel square of the grid
    int squares = 0;     // squares per side of the grid: the map's size over block, rounded up
    int block = 1;       // cells per square's side: 1, or more when the map is larger than the room (cell is then 1)
    int labelWidth = 0;  // room for token labels, left and top
    int labelLeft = 0;   // x where the query labels start
    int labelEvery = 1;  // label every n-th token so labels never overlap
    QRect legendBar;     // the colour scale
    QRect maskedSwatch;  // the sample of a masked cell
  };
  Geometry geometry() const;
  QFont labelFont() const;
  QFont cellFont(int cell) const;
  void paintCells(QPainter& painter, const Geometry& g) const;
  void paintLabels(QPainter& painter, const Geometry& g) const;
  void paintLegend(QPainter& painter, const Geometry& g) const;
  QString tooltipFor(int query, int key) const;
  QString blockTooltip(int query, int key, int block) const;
  // The coloured squares of the shown map, made again only when the trace, head, colour top,
  // scale or block size changed (a repaint for a tooltip or the selected query reuses them).
  const QImage& cells(const HeadMap& map, int block, double top) const;

  HeadMap shown() const;

  const AttentionMapModel* model_;
  HeadSelection* selection_;
  const SharedColourScale* colourScale_;
  bool valuesShown_ = false;
  struct CellsKey {
    const void* trace = nullptr;
    int layer = -1, head = -1, block = 0, scale = -1;
    double top = -1;
    bool operator==(const CellsKey&) const = default;
  };
  mutable CellsKey cellsKey_;
  mutable QImage cells_;
};

}  // namespace attnlab
