#pragma once
// Length extrapolation as a chart: task accuracy (top) and validation loss (bottom) against the
// multiple of the training length, one line per run (the Lengths view draws its run's; the
// comparison window one per run). Hovering a point names the run, the length and both values; a
// run whose model refuses a length (learned positions) has the engine's one-line reason written
// across the chart. Exports as a picture and as CSV (one row per run and length).
#include <QColor>
#include <QWidget>
#include <vector>

#include "length_sweep.h"
#include "view_export.h"

class QChartView;
class QLabel;
class QLineSeries;

namespace attnlab {

struct LengthChartLine {
  QString run;  // "run 1: rope"
  QColor colour;
  LengthCurve curve;
};

class LengthChart : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  enum Metric { Accuracy = 0, Loss = 1 };

  explicit LengthChart(QWidget* parent = nullptr);

  void setLines(std::vector<LengthChartLine> lines);
  const std::vector<LengthChartLine>& lines() const { return lines_; }
  // The drawn series of one chart (one per line with points) and their points (x: multiple).
  QList<QLineSeries*> series(Metric metric) const;
  // What hovering near `point` of line `line` on the `metric` chart shows; "" without points.
  QString hoverText(int line, Metric metric, QPointF point) const;
  // What is written across the charts: refusals, "not evaluated yet", "no answer tokens".
  QString note() const;
  void setPlaceholder(const QString& text);  // said when no line has points

  QString exportName() const override { return QStringLiteral("length-extrapolation"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;  // run,step,multiple,length,loss,perplexity,accuracy,exact_match

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void redraw();
  void redrawChart(Metric metric);

  QChartView* charts_[2];
  QLabel* note_;
  QString placeholder_;
  std::vector<LengthChartLine> lines_;
  std::vector<int> lineOfSeries_[2];  // per chart: which line each series draws
};

}  // namespace attnlab
