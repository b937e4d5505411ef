#pragma once
// The head-drop curves beneath the head table: the task metric as heads are switched off in three
// orders (least important first, most important first, random). Hovering a point names its order,
// the heads removed and the value; the chart exports as a picture and as its own CSV (one row per
// point), apart from the table's.
#include <QChartView>

#include "view_export.h"

namespace attnlab {

class HeadTableModel;
struct HeadDropCurve;

class HeadDropChart : public QChartView, public ExportableView {
  Q_OBJECT
 public:
  explicit HeadDropChart(HeadTableModel* model, QWidget* parent = nullptr);

  void redraw();  // from the model's latest importance
  // What hovering near `point` of curve `series` (0: least important first, 1: most, 2: random)
  // shows: the nearest drawn point's order, heads removed and value; "" without points.
  QString hoverText(int series, QPointF point) const;

  QString exportName() const override { return QStringLiteral("head-drop-curves"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;  // order,heads_removed,loss[,accuracy]

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  const HeadDropCurve* curveOf(int series) const;

  HeadTableModel* model_;
};

}  // namespace attnlab
