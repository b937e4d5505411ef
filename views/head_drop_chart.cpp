#include "head_drop_chart.h"

#include <QChart>
#include <QContextMenuEvent>
#include <QCursor>
#include <QLineSeries>
#include <QMenu>
#include <QTextStream>
#include <QToolTip>
#include <QValueAxis>
#include <cmath>
#include <limits>

#include "head_table_model.h"

namespace attnlab {

namespace {

struct CurveStyle {
  const char* order;
  const char* name;
  QColor colour;
};
const CurveStyle kCurves[] = {
    {"ascending", "least important first", QColor(0x2a, 0x9d, 0x5c)},
    {"descending", "most important first", QColor(0xd1, 0x49, 0x3f)},
    {"random", "random order", QColor(0x6b, 0x6b, 0x6b)},
};

// Drawn points are counts of heads removed 0, 1, 2, ... unless the curve was sampled (dropCurvePoints).
bool oneByOne(const HeadDropCurve& curve) {
  for (size_t k = 0; k < curve.count.size(); ++k)
    if (curve.count[k] != static_cast<int>(k)) return false;
  return true;
}

}  // namespace

HeadDropChart::HeadDropChart(HeadTableModel* model, QWidget* parent) : QChartView(new QChart, parent), model_(model) {
  QChart* chart = this->chart();
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  auto* x = new QValueAxis;
  auto* y = new QValueAxis;
  x->setTitleText(tr("heads removed"));
  x->setLabelFormat(QStringLiteral("%d"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (int i = 0; i < int(std::size(kCurves)); ++i) {
    auto* series = new QLineSeries;
    series->setName(tr(kCurves[i].name));
    series->setPen(QPen(kCurves[i].colour, 2));
    series->setPointsVisible(true);
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
    connect(series, &QLineSeries::hovered, this, [this, i](const QPointF& point, bool entered) {
      if (entered) QToolTip::showText(QCursor::pos(), hoverText(i, point), this);
      else QToolTip::hideText();
    });
  }
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(220);
}

const HeadDropCurve* HeadDropChart::curveOf(int series) const {
  const LiveHeadImportance* importance = model_->importance();
  if (!importance || series < 0 || series >= int(std::size(kCurves))) return nullptr;
  for (const HeadDropCurve& curve : importance->curves)
    if (curve.order == kCurves[series].order) return &curve;
  return nullptr;
}

void HeadDropChart::redraw() {
  QChart* chart = this->chart();
  const LiveHeadImportance* importance = model_->importance();
  const bool accuracy = model_->hasAnswers();
  auto* x = static_cast<QValueAxis*>(chart->axes(Qt::Horizontal).constFirst());
  auto* y = static_cast<QValueAxis*>(chart->axes(Qt::Vertical).constFirst());
  y->setTitleText(accuracy ? tr("accuracy") : tr("validation loss"));
  const int offHeads = importance ? model_->rowCount() - int(importance->curves.front().removed.size()) : 0;
  const QString metric = accuracy ? tr("accuracy on the answer tokens") : tr("validation loss (nats)");
  const bool sampled = importance && !oneByOne(importance->curves.front());
  const QString how = sampled ? tr("as heads are switched off (%1 evenly spaced counts)").arg(importance->curves.front().count.size())
                              : tr("as heads are switched off one by one");
  chart->setTitle(offHeads > 0 ? tr("Head-drop curves: %1 %2 (%3 already off)").arg(metric, how).arg(offHeads)
                               : tr("Head-drop curves: %1 %2").arg(metric, how));
  double top = 0, bottom = std::numeric_limits<double>::infinity();
  int most = 1;
  const auto series = chart->series();
  for (int i = 0; i < series.size(); ++i) {
    QList<QPointF> points;
    if (const HeadDropCurve* curve = curveOf(i))
      for (size_t k = 0; k < curve->metric.size(); ++k)
        if (std::isfinite(curve->metric[k])) {
          points.append(QPointF(double(curve->count[k]), curve->metric[k]));
          top = std::max(top, curve->metric[k]);
          bottom = std::min(bottom, curve->metric[k]);
          most = std::max(most, curve->count[k]);
        }
    static_cast<QLineSeries*>(series[i])->replace(points);
  }
  x->setRange(0, most);
  x->setTickCount(std::min(most, 16) + 1);
  if (accuracy) {
    y->setRange(0, 1);
    y->setTickCount(6);
    y->setLabelFormat(QStringLiteral("%.1f"));
  } else {
    // Loss curves can differ by little against their level: the range spans the curves, not 0.
    if (!std::isfinite(bottom)) bottom = 0, top = 1;
    const double margin = std::max(0.05 * (top - bottom), 0.01 * std::max(top, 1e-3));
    y->setRange(std::max(0.0, bottom - margin), top + margin);
    y->setTickCount(6);
    y->setLabelFormat(QStringLiteral("%.3g"));
    y->applyNiceNumbers();
  }
}

QString HeadDropChart::hoverText(int series, QPointF point) const {
  const HeadDropCurve* curve = curveOf(series);
  if (!curve) return {};
  int nearest = -1;
  for (size_t k = 0; k < curve->count.size(); ++k)
    if (std::isfinite(curve->metric[k]) &&
        (nearest < 0 || std::abs(curve->count[k] - point.x()) < std::abs(curve->count[nearest] - point.x())))
      nearest = static_cast<int>(k);
  if (nearest < 0) return {};
  const QString value = model_->hasAnswers() ? tr("accuracy %1").arg(curve->metric[nearest], 0, 'f', 3)
                                             : tr("validation loss %1").arg(curve->metric[nearest], 0, 'f', 3);
  return tr("%1: %2 head(s) removed, %3").arg(tr(kCurves[series].name)).arg(curve->count[nearest]).arg(value);
}

bool HeadDropChart::hasExportData() const { return curveOf(0) != nullptr; }

void HeadDropChart::writeCsv(QTextStream& out) const {
  const bool accuracy = model_->hasAnswers();
  out << (accuracy ? "order,heads_removed,loss,accuracy\n" : "order,heads_removed,loss\n");
  for (int i = 0; i < int(std::size(kCurves)); ++i)
    if (const HeadDropCurve* curve = curveOf(i))
      for (size_t k = 0; k < curve->count.size(); ++k) {
        out << kCurves[i].order << ',' << curve->count[k] << ',' << QString::number(curve->loss[k], 'g', 7);
        if (accuracy) out << ',' << QString::number(curve->metric[k], 'g', 7);
        out << '\n';
      }
}

void HeadDropChart::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
