#include "length_chart.h"

#include <QChart>
#include <QChartView>
#include <QContextMenuEvent>
#include <QCursor>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMenu>
#include <QTextStream>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <cmath>

namespace attnlab {

namespace {

double valueOf(const EvalResult& r, LengthChart::Metric metric) { return metric == LengthChart::Accuracy ? r.accuracy : r.loss; }

QString number(double v) { return std::isfinite(v) ? QString::number(v, 'g', 9) : QString(); }

QString multipleText(double m) { return QStringLiteral("%1x").arg(m, 0, 'g', 4); }

}  // namespace

LengthChart::LengthChart(QWidget* parent) : QWidget(parent), note_(new QLabel(this)) {
  note_->setWordWrap(true);
  note_->setStyleSheet(QStringLiteral("color: #a05a00; padding: 2px 6px;"));
  note_->setObjectName(QStringLiteral("lengthNote"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(note_);
  const QString titles[2] = {tr("Task accuracy against sequence length"), tr("Validation loss against sequence length")};
  for (int c = 0; c < 2; ++c) {
    auto* chart = new QChart;
    chart->setTitle(titles[c]);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    auto* x = new QLogValueAxis;
    x->setBase(2);
    x->setLabelFormat(QStringLiteral("%gx"));
    x->setTitleText(tr("multiple of the training length"));
    auto* y = new QValueAxis;
    y->setTitleText(c == Accuracy ? tr("% answer tokens correct") : tr("cross-entropy (nats)"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    charts_[c] = new QChartView(chart, this);
    charts_[c]->setRenderHint(QPainter::Antialiasing);
    charts_[c]->setMinimumHeight(160);
    charts_[c]->setContextMenuPolicy(Qt::NoContextMenu);  // this widget's menu, with the export
    layout->addWidget(charts_[c], 1);
  }
  placeholder_ = tr("Not evaluated yet: press Evaluate (or pause the run).");
  redraw();
}

void LengthChart::setLines(std::vector<LengthChartLine> lines) {
  lines_ = std::move(lines);
  redraw();
}

void LengthChart::setPlaceholder(const QString& text) {
  placeholder_ = text;
  redraw();
}

QList<QLineSeries*> LengthChart::series(Metric metric) const {
  QList<QLineSeries*> list;
  for (QAbstractSeries* s : charts_[metric]->chart()->series()) list << static_cast<QLineSeries*>(s);
  return list;
}

void LengthChart::redraw() {
  QStringList notes;
  bool anyPoints = false, anyAnswers = false;
  for (const LengthChartLine& line : lines_) {
    anyPoints = anyPoints || !line.curve.points.empty();
    anyAnswers = anyAnswers || line.curve.hasAnswers;
    if (!line.curve.refusal.isEmpty())
      notes << (lines_.size() > 1 ? tr("%1: %2").arg(line.run, line.curve.refusal) : line.curve.refusal);
  }
  if (!anyPoints && notes.isEmpty()) notes << placeholder_;
  if (anyPoints && !anyAnswers) notes << tr("No answer tokens in this task: it has no accuracy, only loss.");
  note_->setText(notes.join(QLatin1Char('\n')));
  note_->setVisible(!notes.isEmpty());
  redrawChart(Accuracy);
  redrawChart(Loss);
}

void LengthChart::redrawChart(Metric metric) {
  QChart* chart = charts_[metric]->chart();
  chart->removeAllSeries();
  lineOfSeries_[metric].clear();
  auto* x = static_cast<QLogValueAxis*>(chart->axes(Qt::Horizontal).constFirst());
  auto* y = static_cast<QValueAxis*>(chart->axes(Qt::Vertical).constFirst());
  double lowX = 1, highX = 2, lowY = INFINITY, highY = -INFINITY;
  for (int i = 0; i < static_cast<int>(lines_.size()); ++i) {
    const LengthChartLine& line = lines_[i];
    QList<QPointF> points;
    for (const LengthPoint& p : line.curve.points) {
      const double v = valueOf(p.result, metric) * (metric == Accuracy ? 100.0 : 1.0);
      if (!std::isfinite(v)) continue;
      points << QPointF(p.multiple, v);
      lowX = std::min(lowX, p.multiple), highX = std::max(highX, p.multiple);
      lowY = std::min(lowY, v), highY = std::max(highY, v);
    }
    if (points.isEmpty()) continue;
    auto* series = new QLineSeries;
    series->setName(line.run);
    series->setPen(QPen(line.colour, 2));
    series->setPointsVisible(true);
    series->replace(points);
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
    const int lineIndex = i;
    connect(series, &QLineSeries::hovered, this, [this, lineIndex, metric](const QPointF& point, bool entered) {
      if (entered) QToolTip::showText(QCursor::pos(), hoverText(lineIndex, metric, point), this);
      else QToolTip::hideText();
    });
    lineOfSeries_[metric].push_back(i);
  }
  x->setRange(lowX / 1.25, highX * 1.25);
  if (metric == Accuracy) {
    y->setRange(0, 100);
    y->setTickCount(6);
    y->setLabelFormat(QStringLiteral("%.0f"));
  } else {
    if (!std::isfinite(lowY)) lowY = 0, highY = 1;
    const double margin = std::max(0.05 * (highY - lowY), 0.01 * std::max(highY, 1e-3));
    y->setRange(std::max(0.0, lowY - margin), highY + margin);
    y->setTickCount(6);
    y->setLabelFormat(QStringLiteral("%.3g"));
    y->applyNiceNumbers();
  }
  chart->legend()->setVisible(lineOfSeries_[metric].size() > 1);
}

QString LengthChart::hoverText(int line, Metric metric, QPointF point) const {
  if (line < 0 || line >= static_cast<int>(lines_.size())) return {};
  const LengthPoint* nearest = nullptr;
  for (const LengthPoint& p : lines_[line].curve.points)
    if (std::isfinite(valueOf(p.result, metric)) &&
        (!nearest || std::abs(std::log(p.multiple / point.x())) < std::abs(std::log(nearest->multiple / point.x()))))
      nearest = &p;
  if (!nearest) return {};
  const QString accuracy = std::isfinite(nearest->result.accuracy) ? tr(", accuracy %1%").arg(100 * nearest->result.accuracy, 0, 'f', 1)
                                                                  : QString();
  return tr("%1: %2 (%3 tokens): loss %4%5")
      .arg(lines_[line].run, multipleText(nearest->multiple))
      .arg(nearest->length)
      .arg(nearest->result.loss, 0, 'f', 4)
      .arg(accuracy);
}

QString LengthChart::note() const { return note_->isHidden() ? QString() : note_->text(); }

bool LengthChart::hasExportData() const {
  for (const LengthChartLine& line : lines_)
    if (!line.curve.points.empty()) return true;
  return false;
}

void LengthChart::writeCsv(QTextStream& out) const {
  out << "run,step,multiple,length,loss,perplexity,accuracy,exact_match\n";
  for (const LengthChartLine& line : lines_)
    for (const LengthPoint& p : line.curve.points)
      out << csvField(line.run) << ',' << line.curve.step << ',' << number(p.multiple) << ',' << p.length << ',' << number(p.result.loss)
          << ',' << number(p.result.perplexity) << ',' << number(p.result.accuracy) << ',' << number(p.result.exact_match) << '\n';
}

void LengthChart::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
