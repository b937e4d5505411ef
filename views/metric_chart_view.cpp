#include "metric_chart_view.h"

#include <QChart>
#include <QContextMenuEvent>
#include <QLineSeries>
#include <QMenu>
#include <QPainter>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "loss_history_model.h"

namespace attnlab {

namespace {

// The smallest of 1, 2, 5 x 10^k (k >= 0) that is at least `atLeast`.
int niceInterval(double atLeast) {
  for (int scale = 1;; scale *= 10)
    for (int step : {1, 2, 5})
      if (step * scale >= atLeast) return step * scale;
}

}  // namespace

// Qt Charts restrokes a whole line for every point appended, so a fast run drawn step by step
// saturates the UI thread. New rows are drawn together at most every kRedrawMs, and each series draws at most
// about kMaxDrawnPoints: past that the rows are drawn in buckets of `stride_`, each as its lowest
// and highest value (spikes stay visible), and the stride doubles whenever the limit is reached again.
constexpr int kMaxDrawnPoints = 2000;
constexpr int kRedrawMs = 200;

MetricChartView::MetricChartView(const QString& title, const QString& valueTitle, const LossHistoryModel* model,
                                 SeriesMaker makeSeries, QWidget* parent)
    : QChartView(parent),
      model_(model),
      makeSeries_(std::move(makeSeries)),
      stepAxis_(new QValueAxis),
      valueAxis_(new QValueAxis),
      redraw_(new QTimer(this)) {
  redraw_->setSingleShot(true);
  redraw_->setInterval(kRedrawMs);
  connect(redraw_, &QTimer::timeout, this, &MetricChartView::drawPending);
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(2, 2, 2, 2));
  stepAxis_->setTitleText(tr("step"));
  stepAxis_->setLabelFormat(QStringLiteral("%d"));
  valueAxis_->setTitleText(valueTitle);
  valueAxis_->setLabelFormat(QStringLiteral("%.3g"));
  chart->addAxis(stepAxis_, Qt::AlignBottom);
  chart->addAxis(valueAxis_, Qt::AlignLeft);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setRubberBand(QChartView::RectangleRubberBand);
  setMouseTracking(true);
  setMinimumSize(260, 180);

  connect(model_, &LossHistoryModel::rowsInserted, this,
          [this](const QModelIndex&, int first, int last) { appendRows(first, last); });
  connect(model_, &LossHistoryModel::modelReset, this, &MetricChartView::reload);
  connect(model_, &LossHistoryModel::plannedLayersChanged, this, [this] {
    if (model_->rowCount() == 0) reload();
  });
  reload();
}

void MetricChartView::setTotalSteps(int steps) {
  totalSteps_ = steps;
  updateRanges();
}

void MetricChartView::setFixedValueRange(double low, double high) {
  fixedRange_ = true;
  valueAxis_->setRange(low, high);
}

void MetricChartView::rebuildSeries(const LossPoint& first) {
  for (QLineSeries* s : series_) {
    chart()->removeSeries(s);
    delete s;
  }
  series_.clear();
  specs_ = makeSeries_(first);
  for (const MetricSeries& spec : specs_) {
    auto* s = new QLineSeries;
    s->setName(spec.name);
    QPen pen(spec.colour);
    pen.setWidthF(spec.sparse ? 2.0 : 1.3);
    s->setPen(pen);
    s->setPointsVisible(spec.sparse);
    chart()->addSeries(s);
    s->attachAxis(stepAxis_);
    s->attachAxis(valueAxis_);
    series_.push_back(s);
  }
  chart()->legend()->setVisible(specs_.size() > 1);
}

void MetricChartView::reload() {
  lowest_ = std::numeric_limits<double>::infinity();
  highest_ = -std::numeric_limits<double>::infinity();
  zoomed_ = false;
  for (QLineSeries* s : series_) s->clear();
  if (model_->rowCount() > 0) appendRows(0, model_->rowCount() - 1);
  else if (model_->plannedLayers() > 0) rebuildSeries(model_->plannedShape());  // the new run's legend at once
  updateRanges();
}


void MetricChartView::appendRows(int first, int last) {
  const auto& points = model_->points();
  const bool fresh = first == 0 || series_.empty();
  if (fresh) {
    rebuildSeries(points[first]);
    drawnRows_ = 0;
    stride_ = 1;
  }
  for (int row = first; row <= last; ++row)
    for (const MetricSeries& spec : specs_) {
      const double v = spec.value(points[row]);
      // A diverging run can report non-finite values; the chart shows what is finite.
      if (!std::isfinite(v)) continue;
      lowest_ = std::min(lowest_, v);
      highest_ = std::max(highest_, v);
    }
  pendingEnd_ = last + 1;
  if (fresh) drawPending();
  else if (!redraw_->isActive()) redraw_->start();  // the axes follow with the drawing: laying them out is the costly part
}

void MetricChartView::flush() {
  if (redraw_->isActive()) drawPending();
}

void MetricChartView::drawPending() {
  redraw_->stop();
  if (series_.empty() || pendingEnd_ > static_cast<int>(model_->points().size())) return;  // reset meanwhile
  int stride = stride_;
  while (pendingEnd_ / stride * 2 > kMaxDrawnPoints) stride *= 2;
  if (stride != stride_) {  // coarser buckets, drawn again from the start
    stride_ = stride;
    for (QLineSeries* s : series_) s->clear();
    drawnRows_ = 0;
  }
  drawBuckets(pendingEnd_);
  updateRanges();
}

void MetricChartView::drawBuckets(int end) {
  const auto& points = model_->points();
  const int buckets = (end - drawnRows_) / stride_;
  for (size_t i = 0; i < specs_.size(); ++i) {
    QList<QPointF> added;
    for (int b = 0; b < buckets; ++b) {
      const int from = drawnRows_ + b * stride_;
      int low = -1, high = -1;
      for (int row = from; row < from + stride_; ++row) {
        const double v = specs_[i].value(points[row]);
        if (!std::isfinite(v)) continue;
        if (low < 0 || v < specs_[i].value(points[low])) low = row;
        if (high < 0 || v > specs_[i].value(points[high])) high = row;
      }
      if (low < 0) continue;
      for (int row : {std::min(low, high), std::max(low, high)}) {
        added.append(QPointF(points[row].step, specs_[i].value(points[row])));
        if (low == high) break;
      }
    }
    // replace() updates the line once; append() would restroke it for every point added
    if (!added.isEmpty()) series_[i]->replace(series_[i]->points() + added);
  }
  drawnRows_ += buckets * stride_;
}

void MetricChartView::updateRanges() {
  if (zoomed_) return;  // the user's zoom stays until reset
  // The step axis grows ahead of the data (never past the run's end), so early steps are not
  // squeezed into the left edge of a long run.
  const int lastStep = model_->points().empty() ? 0 : model_->points().back().step;
  int stepLimit = std::max(10, static_cast<int>(std::ceil(lastStep * 1.25)));
  if (totalSteps_ > 0) stepLimit = std::min(stepLimit, std::max(totalSteps_, lastStep));
  // Whole-step ticks 1, 2 or 5 x 10^k apart, the last one at or just past the limit (so a
  // 600-step run's axis ends at 600, and steps 0-10 read 0, 2, 4, ...).
  const int interval = niceInterval(stepLimit / 5.0);
  const int ticks = (stepLimit + interval - 1) / interval;
  stepAxis_->setRange(0, double(ticks) * interval);
  stepAxis_->setTickCount(ticks + 1);
  if (fixedRange_) return;
  if (lowest_ > highest_) {
    valueAxis_->setRange(0, 1);
    return;
  }
  // A flat curve (the first point, a constant learning rate) still gets a span of a tenth of its
  // value, so the axis shows distinct ticks at three significant digits.
  const double span = highest_ - lowest_, magnitude = std::max(std::abs(highest_), std::abs(lowest_));
  const double pad = std::max({0.05 * span, (0.1 * magnitude - span) / 2, 1e-9});
  valueAxis_->setRange(lowest_ >= 0 ? std::max(0.0, lowest_ - pad) : lowest_ - pad, highest_ + pad);
  valueAxis_->applyNiceNumbers();
}

void MetricChartView::setNote(const QString& note) {
  if (note == note_) return;
  note_ = note;
  for (QLineSeries* s : series_) s->setVisible(note_.isEmpty());
  scene()->update();
}

void MetricChartView::drawForeground(QPainter* painter, const QRectF& rect) {
  QChartView::drawForeground(painter, rect);
  if (note_.isEmpty()) return;
  painter->save();
  painter->setPen(palette().color(QPalette::PlaceholderText));
  painter->drawText(chart()->mapToScene(chart()->plotArea()).boundingRect(), Qt::AlignCenter | Qt::TextWordWrap, note_);
  painter->restore();
}

void MetricChartView::resetZoom() {
  zoomed_ = false;
  chart()->zoomReset();
  updateRanges();
}

QString MetricChartView::valuesNear(double step) const {
  const auto& points = model_->points();
  if (points.empty() || specs_.empty()) return {};
  // Points are in step order: the nearest step with a value, per series.
  QString text = QString();
  int shownStep = -1;
  for (const MetricSeries& spec : specs_) {
    auto it = std::lower_bound(points.begin(), points.end(), step, [](const LossPoint& p, double s) { return p.step < s; });
    const LossPoint* best = nullptr;
    for (auto scan = it; scan != points.end() && scan - it < 64 && !best; ++scan)
      if (std::isfinite(spec.value(*scan))) best = &*scan;
    for (auto scan = it; scan != points.begin() && it - scan < 64;) {
      --scan;
      if (!std::isfinite(spec.value(*scan))) continue;
      if (!best || std::abs(scan->step - step) < std::abs(best->step - step)) best = &*scan;
      break;
    }
    if (!best) continue;
    if (shownStep != best->step) text += tr("%1step %2\n").arg(text.isEmpty() ? QString() : QStringLiteral("\n")).arg(best->step);
    shownStep = best->step;
    text += QStringLiteral("%1: %2\n").arg(spec.name).arg(spec.value(*best), 0, 'g', 4);
  }
  return text.trimmed();
}

void MetricChartView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::RightButton) return;  // the context menu, not Qt's zoom-out
  QChartView::mousePressEvent(event);
}

void MetricChartView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::RightButton) return;
  const bool wasDragging = event->button() == Qt::LeftButton;
  QChartView::mouseReleaseEvent(event);
  if (wasDragging && chart()->isZoomed()) zoomed_ = true;
}

void MetricChartView::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void MetricChartView::mouseMoveEvent(QMouseEvent* event) {
  QChartView::mouseMoveEvent(event);
  if (event->buttons() != Qt::NoButton) return;
  const QPointF inScene = mapToScene(event->position().toPoint());
  if (!chart()->plotArea().contains(chart()->mapFromScene(inScene))) {
    QToolTip::hideText();
    return;
  }
  const QPointF value = chart()->mapToValue(chart()->mapFromScene(inScene));
  const QString text = valuesNear(value.x());
  if (!text.isEmpty()) QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void MetricChartView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  QAction* reset = menu.addAction(tr("Reset zoom"), this, &MetricChartView::resetZoom);
  reset->setEnabled(zoomed_);
  if (extendMenu_) {
    menu.addSeparator();
    extendMenu_(&menu);
  }
  menu.exec(event->globalPos());
}

}  // namespace attnlab
