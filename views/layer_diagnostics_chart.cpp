#include "layer_diagnostics_chart.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "metric_chart_view.h"
#include "snapshots.h"
#include "training_view.h"

namespace attnlab {

namespace {

struct DiagnosticText {
  const char* csv;
  const char* picker;
  const char* title;
  const char* axis;
  bool share;  // a weight share in [0, 1]
};
const DiagnosticText kText[] = {
    {"map_entropy", QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "attention entropy"),
     QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "Attention entropy per layer (fixed probe)"), QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "nats"),
     false},
    {"previous_token", QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "previous-token score"),
     QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "Previous-token score per layer"),
     QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "mean a(i, i-1)"), true},
    {"induction", QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "induction score"),
     QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "Induction score per layer"),
     QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "mean weight"), true},
    {"sink", QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "sink score"),
     QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "Sink score per layer (first token)"), QT_TRANSLATE_NOOP("LayerDiagnosticsChart", "mean a(i, 0)"),
     true},
};

const std::vector<double>& valuesOf(LayerDiagnosticsChart::Diagnostic d, const LossPoint& p) {
  switch (d) {
    case LayerDiagnosticsChart::Entropy: return p.layer_diagnostics.entropy;
    case LayerDiagnosticsChart::PreviousToken: return p.layer_diagnostics.previous_token;
    case LayerDiagnosticsChart::Induction: return p.layer_diagnostics.induction;
    default: return p.layer_diagnostics.sink;
  }
}

}  // namespace

double LayerDiagnosticsChart::valueOf(Diagnostic diagnostic, const LossPoint& point, int layer) {
  const std::vector<double>& v = valuesOf(diagnostic, point);
  return layer >= 0 && layer < static_cast<int>(v.size()) ? v[layer] : kNotMeasured;
}

const char* LayerDiagnosticsChart::csvName(Diagnostic diagnostic) { return kText[diagnostic].csv; }

LayerDiagnosticsChart::LayerDiagnosticsChart(const LossHistoryModel* model, QWidget* parent)
    : QWidget(parent), picker_(new QComboBox(this)), stack_(new QStackedWidget(this)) {
  for (int d = 0; d < DiagnosticCount; ++d) {
    const auto diagnostic = static_cast<Diagnostic>(d);
    // Every step has a gradient per layer, so the first point gives the layer count (the
    // diagnostics themselves are measured only at validation steps).
    charts_[d] = new MetricChartView(tr(kText[d].title), tr(kText[d].axis), model, [diagnostic](const LossPoint& first) {
      std::vector<MetricSeries> series;
      const int layers = static_cast<int>(first.layer_grad_norm.size());
      for (int l = 0; l < layers; ++l)
        series.push_back({tr("layer %1").arg(l + 1), seriesColour(l, layers),
                          [diagnostic, l](const LossPoint& p) { return valueOf(diagnostic, p, l); }, true});
      return series;
    }, stack_);
    if (kText[d].share) charts_[d]->setFixedValueRange(0, 1);
    stack_->addWidget(charts_[d]);
    picker_->addItem(tr(kText[d].picker));
  }
  picker_->setObjectName(QStringLiteral("layerDiagnosticPicker"));
  picker_->setToolTip(tr("Which per-layer diagnostic to plot, each the mean over the layer's heads, measured on the same fixed probe "
                         "at each validation step.\nEntropy: how spread a query's attention is (nats). Previous-token: weight on the "
                         "token just before. Induction: on a repeated sequence, weight on the token after the earlier copy of the "
                         "current one. Sink: weight on the first token."));
  picker_->setFocusPolicy(Qt::StrongFocus);  // the wheel changes it only once clicked
  connect(picker_, &QComboBox::currentIndexChanged, stack_, &QStackedWidget::setCurrentIndex);
  setDiagnostic(Induction);  // entropy is beside it already (on the training batch); induction is what heads learn
  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("Per-layer diagnostic"), this));
  row->addWidget(picker_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(row);
  layout->addWidget(stack_, 1);
}

void LayerDiagnosticsChart::setDiagnostic(Diagnostic diagnostic) { picker_->setCurrentIndex(diagnostic); }

LayerDiagnosticsChart::Diagnostic LayerDiagnosticsChart::diagnostic() const { return static_cast<Diagnostic>(picker_->currentIndex()); }

void LayerDiagnosticsChart::setTotalSteps(int steps) {
  for (MetricChartView* chart : charts_) chart->setTotalSteps(steps);
}

void LayerDiagnosticsChart::setMenuExtender(const std::function<void(QMenu*)>& extend) {
  for (MetricChartView* chart : charts_) chart->setMenuExtender(extend);
}

void LayerDiagnosticsChart::setCompact() {
  for (MetricChartView* chart : charts_) chart->setMinimumSize(120, 110);
}

}  // namespace attnlab
