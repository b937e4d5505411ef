#include "training_view.h"

#include <QContextMenuEvent>
#include <QGridLayout>
#include <QLabel>
#include <QMenu>
#include <QTextStream>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "layer_diagnostics_chart.h"
#include "loss_history_model.h"
#include "metric_chart_view.h"

namespace attnlab {

namespace {

std::vector<MetricSeries> perLayer(const LossPoint& first, const std::vector<double> LossPoint::*values) {
  std::vector<MetricSeries> series;
  const int layers = static_cast<int>((first.*values).size());
  for (int l = 0; l < layers; ++l)
    series.push_back({QObject::tr("layer %1").arg(l + 1), seriesColour(l, layers), [values, l](const LossPoint& p) {
                        const auto& v = p.*values;
                        return l < static_cast<int>(v.size()) ? v[l] : kNotMeasured;
                      }});
  return series;
}

QString number(double v) { return std::isfinite(v) ? QString::number(v, 'g', 8) : QString(); }

}  // namespace

QColor seriesColour(int index, int count) {
  // Hues spread around the wheel, skipping yellow-greens that read poorly on white.
  static const QColor palette[] = {QColor(31, 119, 180), QColor(230, 100, 20), QColor(44, 160, 44), QColor(214, 39, 40),
                                   QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(23, 190, 207)};
  constexpr int kPalette = sizeof(palette) / sizeof(palette[0]);
  if (count <= kPalette) return palette[index % kPalette];
  return QColor::fromHsvF(std::fmod(index * 0.618034, 1.0), 0.75, 0.8);
}

TrainingView::TrainingView(const ViewContext& context, QWidget* parent) : QWidget(parent), model_(context.history) {
  const LossHistoryModel* model = model_;
  auto* loss = new MetricChartView(tr("Loss"), tr("cross-entropy (nats)"), model, [](const LossPoint&) {
    return std::vector<MetricSeries>{
        {tr("training loss"), QColor(70, 110, 200), [](const LossPoint& p) { return p.loss; }},
        {tr("validation loss"), QColor(230, 120, 30), [](const LossPoint& p) { return p.val_loss; }, true}};
  }, this);
  auto* accuracy = new MetricChartView(tr("Task accuracy (validation)"), tr("% answer tokens correct"), model, [](const LossPoint&) {
    return std::vector<MetricSeries>{{tr("accuracy %"), QColor(44, 160, 44), [](const LossPoint& p) { return 100 * p.accuracy; }, true}};
  }, this);
  accuracy->setFixedValueRange(0, 100);
  auto* lr = new MetricChartView(tr("Learning rate"), tr("learning rate"), model, [](const LossPoint&) {
    return std::vector<MetricSeries>{{tr("learning rate"), QColor(120, 120, 120), [](const LossPoint& p) { return p.lr; }}};
  }, this);
  auto* grads = new MetricChartView(tr("Gradient norm per layer (before clipping)"), tr("\u2016gradient\u2016"), model,
                                    [](const LossPoint& first) { return perLayer(first, &LossPoint::layer_grad_norm); }, this);
  auto* entropy = new MetricChartView(tr("Attention entropy per layer"), tr("nats"), model,
                                      [](const LossPoint& first) { return perLayer(first, &LossPoint::layer_entropy); }, this);
  charts_ = {loss, accuracy, lr, grads, entropy};
  diagnostics_ = new LayerDiagnosticsChart(model, this);

  auto* hint = new QLabel(tr("Drag a rectangle on a chart to zoom, double-click to reset; hover for values; right-click to export."), this);
  hint->setForegroundRole(QPalette::PlaceholderText);
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(4, 4, 4, 4);
  grid->setSpacing(4);
  grid->addWidget(hint, 0, 0, 1, 3);
  grid->addWidget(loss, 1, 0);
  grid->addWidget(accuracy, 1, 1);
  grid->addWidget(lr, 1, 2);
  grid->addWidget(grads, 2, 0);
  grid->addWidget(entropy, 2, 1);
  grid->addWidget(diagnostics_, 2, 2);
  grid->setRowStretch(1, 1);
  grid->setRowStretch(2, 1);
  for (int c = 0; c < 3; ++c) grid->setColumnStretch(c, 1);
  for (MetricChartView* chart : charts_) chart->setMenuExtender([this](QMenu* menu) { addExportActions(menu, *this, this); });
  diagnostics_->setMenuExtender([this](QMenu* menu) { addExportActions(menu, *this, this); });
  if (context.compact) {
    for (MetricChartView* chart : charts_) chart->setMinimumSize(120, 110);
    diagnostics_->setCompact();
    hint->setWordWrap(true);
  }
  const auto followPlan = [this] {
    for (MetricChartView* chart : charts_) chart->setTotalSteps(model_->plannedSteps());
    diagnostics_->setTotalSteps(model_->plannedSteps());
  };
  connect(model_, &LossHistoryModel::plannedStepsChanged, this, followPlan);
  followPlan();
  if (const AttentionMapModel* attention = context.attention) {
    // A task without answer tokens (the toy language, a text file) has no accuracy to chart. Also
    // read at once: a comparison pane makes this view anew over a run that is already traced.
    const auto followTask = [attention, accuracy] {
      const TraceSnapshot* s = attention->snapshot();
      const bool noAnswers = s && s->model && s->model->run && !s->model->run->hasAnswers;
      accuracy->setNote(noAnswers ? tr("no answer tokens in this task: it has no accuracy, only loss") : QString());
    };
    connect(attention, &AttentionMapModel::mapChanged, accuracy, followTask);
    followTask();
  }
}

void TrainingView::settle() {
  for (MetricChartView* chart : charts_) chart->flush();
  for (int d = 0; d < LayerDiagnosticsChart::DiagnosticCount; ++d) diagnostics_->chart(static_cast<LayerDiagnosticsChart::Diagnostic>(d))->flush();
}

bool TrainingView::hasExportData() const { return model_->rowCount() > 0; }

void TrainingView::writeCsv(QTextStream& out) const {
  const auto& points = model_->points();
  const size_t layers = points.empty() ? 0 : points.front().layer_grad_norm.size();
  // The diagnostics' columns only for a run that measured them (runs saved before they existed did not).
  const bool diagnosed = std::any_of(points.begin(), points.end(), [](const LossPoint& p) { return !p.layer_diagnostics.empty(); });
  const int diagnostics = diagnosed ? LayerDiagnosticsChart::DiagnosticCount : 0;
  out << "step,loss,val_loss,accuracy,lr,grad_norm";
  for (size_t l = 0; l < layers; ++l) out << ",grad_norm_layer" << l + 1;
  for (size_t l = 0; l < layers; ++l) out << ",entropy_layer" << l + 1;
  for (int d = 0; d < diagnostics; ++d)
    for (size_t l = 0; l < layers; ++l) out << ',' << LayerDiagnosticsChart::csvName(LayerDiagnosticsChart::Diagnostic(d)) << "_layer" << l + 1;
  out << '\n';
  for (const LossPoint& p : points) {
    out << p.step << ',' << number(p.loss) << ',' << number(p.val_loss) << ',' << number(p.accuracy) << ','
        << number(p.lr) << ',' << number(p.grad_norm);
    for (size_t l = 0; l < layers; ++l) out << ',' << (l < p.layer_grad_norm.size() ? number(p.layer_grad_norm[l]) : QString());
    for (size_t l = 0; l < layers; ++l) out << ',' << (l < p.layer_entropy.size() ? number(p.layer_entropy[l]) : QString());
    for (int d = 0; d < diagnostics; ++d)
      for (size_t l = 0; l < layers; ++l) out << ',' << number(LayerDiagnosticsChart::valueOf(LayerDiagnosticsChart::Diagnostic(d), p, int(l)));
    out << '\n';
  }
}

void TrainingView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
