#include "loss_chart_view.h"

#include <QChart>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "loss_history_model.h"

namespace attnlab {

LossChartView::LossChartView(const LossHistoryModel* model, QWidget* parent)
    : QChartView(parent),
      model_(model),
      train_(new QLineSeries),
      validation_(new QLineSeries),
      stepAxis_(new QValueAxis),
      lossAxis_(new QValueAxis) {
  auto* chart = new QChart;
  chart->setTitle(tr("Loss"));
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));

  train_->setName(tr("training loss"));
  validation_->setName(tr("validation loss"));
  QPen trainPen(QColor(70, 110, 200));
  trainPen.setWidthF(1.2);
  train_->setPen(trainPen);
  QPen validationPen(QColor(230, 120, 30));
  validationPen.setWidthF(2.2);
  validation_->setPen(validationPen);
  validation_->setPointsVisible(true);

  stepAxis_->setTitleText(tr("step"));
  stepAxis_->setLabelFormat(QStringLiteral("%d"));
  lossAxis_->setTitleText(tr("cross-entropy (nats)"));
  lossAxis_->setLabelFormat(QStringLiteral("%.2f"));

  chart->addSeries(train_);
  chart->addSeries(validation_);
  chart->addAxis(stepAxis_, Qt::AlignBottom);
  chart->addAxis(lossAxis_, Qt::AlignLeft);
  for (QLineSeries* series : {train_, validation_}) {
    series->attachAxis(stepAxis_);
    series->attachAxis(lossAxis_);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(320, 240);

  connect(model_, &LossHistoryModel::rowsInserted, this,
          [this](const QModelIndex&, int first, int last) { appendRows(first, last); });
  connect(model_, &LossHistoryModel::modelReset, this, &LossChartView::reload);
  reload();
}

void LossChartView::setTotalSteps(int steps) {
  totalSteps_ = steps;
  updateRanges();
}

void LossChartView::reload() {
  train_->clear();
  validation_->clear();
  lowest_ = std::numeric_limits<double>::infinity();
  highest_ = -std::numeric_limits<double>::infinity();
  if (model_->rowCount() > 0) appendRows(0, model_->rowCount() - 1);
  updateRanges();
}

void LossChartView::appendRows(int first, int last) {
  QList<QPointF> trainPoints;
  QList<QPointF> validationPoints;
  const auto& points = model_->points();
  for (int row = first; row <= last; ++row) {
    const LossPoint& p = points[row];
    // A diverging run can report non-finite losses; the chart shows what is finite.
    if (std::isfinite(p.loss)) trainPoints.append(QPointF(p.step, p.loss));
    if (std::isfinite(p.val_loss)) validationPoints.append(QPointF(p.step, p.val_loss));
  }
  for (const QPointF& p : trainPoints + validationPoints) {
    lowest_ = std::min(lowest_, p.y());
    highest_ = std::max(highest_, p.y());
  }
  train_->append(trainPoints);
  validation_->append(validationPoints);
  updateRanges();
}

void LossChartView::updateRanges() {
  // The step axis grows ahead of the data (never past the run's end), so early steps are not
  // squeezed into the left edge of a long run.
  const int lastStep = model_->points().empty() ? 0 : model_->points().back().step;
  int stepLimit = std::max(10, static_cast<int>(std::ceil(lastStep * 1.25)));
  if (totalSteps_ > 0) stepLimit = std::min(stepLimit, std::max(totalSteps_, lastStep));
  stepAxis_->setRange(0, stepLimit);
  stepAxis_->applyNiceNumbers();
  if (lowest_ > highest_) {
    lossAxis_->setRange(0, 1);
    return;
  }
  const double pad = std::max(0.05 * (highest_ - lowest_), 0.01);
  lossAxis_->setRange(std::max(0.0, lowest_ - pad), highest_ + pad);
  lossAxis_->applyNiceNumbers();
}

}  // namespace attnlab
