#pragma once
// One training metric against the step, read from a LossHistoryModel: a few line series (or one
// per layer), axes that follow the data, rubber-band zoom (drag a rectangle; double-click or
// the context menu resets it) and a hover tooltip with every series' value at the nearest step.
#include <QChartView>
#include <QTimer>
#include <QColor>
#include <functional>
#include <vector>

#include "snapshots.h"

class QLineSeries;
class QMenu;
class QValueAxis;

namespace attnlab {

class LossHistoryModel;

struct MetricSeries {
  QString name;
  QColor colour;
  std::function<double(const LossPoint&)> value;  // NaN where the step has no value
  bool sparse = false;  // measured on few steps (validation): drawn with points
};

class MetricChartView : public QChartView {
  Q_OBJECT
 public:
  // `makeSeries` is called with the first point of a run (the number of layers is known then).
  using SeriesMaker = std::function<std::vector<MetricSeries>(const LossPoint& first)>;
  MetricChartView(const QString& title, const QString& valueTitle, const LossHistoryModel* model, SeriesMaker makeSeries,
                  QWidget* parent = nullptr);

  void setTotalSteps(int steps);
  // Pins the value axis to [low, high] (e.g. 0..100 % for an accuracy) instead of following the data.
  void setFixedValueRange(double low, double high);
  void resetZoom();
  bool isZoomed() const { return zoomed_; }
  // Adds entries (export) to this chart's context menu.
  void setMenuExtender(std::function<void(QMenu*)> extend) { extendMenu_ = std::move(extend); }
  // The tooltip text for the step nearest to `step` ("" when there is no data).
  QString valuesNear(double step) const;
  int seriesCount() const { return static_cast<int>(specs_.size()); }
  // Said across the plot instead of an empty chart (e.g. a task that has nothing to measure); "" hides it.
  void setNote(const QString& note);
  QString note() const { return note_; }
  // Draws what the 200 ms redraw would (before a screenshot or export).
  void flush();
  const QValueAxis* stepAxis() const { return stepAxis_; }
  const QValueAxis* valueAxis() const { return valueAxis_; }

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;

 private:
  void reload();
  void appendRows(int first, int last);
  void drawPending();
  void drawBuckets(int end);
  void updateRanges();
  void rebuildSeries(const LossPoint& first);

  const LossHistoryModel* model_;
  SeriesMaker makeSeries_;
  std::vector<MetricSeries> specs_;
  std::vector<QLineSeries*> series_;
  QValueAxis* stepAxis_;
  QValueAxis* valueAxis_;
  std::function<void(QMenu*)> extendMenu_;
  int totalSteps_ = 0;
  double lowest_ = 0;
  double highest_ = 0;
  // Rows drawn so far, in buckets of `stride_` rows, each drawn as its lowest and highest value.
  int drawnRows_ = 0;
  int stride_ = 1;
  // Rows that arrived since the last drawing: drawn together, at most every kRedrawMs.
  int pendingEnd_ = 0;
  QTimer* redraw_;
  bool zoomed_ = false;
  bool fixedRange_ = false;
  QString note_;
};

}  // namespace attnlab
