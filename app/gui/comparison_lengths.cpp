#include "comparison_lengths.h"

#include <QPushButton>
#include <QVBoxLayout>

#include "attention_map_model.h"
#include "comparison_pane.h"
#include "length_chart.h"
#include "length_sweep.h"
#include "length_view.h"
#include "training_view.h"

namespace attnlab {

ComparisonLengths::ComparisonLengths(std::vector<ComparisonPane*> panes, LengthSweep* sweep, QWidget* parent)
    : QGroupBox(tr("Length extrapolation, all runs"), parent), panes_(std::move(panes)), sweep_(sweep), chart_(new LengthChart(this)) {
  auto* layout = new QVBoxLayout(this);
  auto* evaluate = new QPushButton(tr("Evaluate all"), this);
  evaluate->setToolTip(tr("Evaluate every run's latest weights at its pane's lengths (on worker threads)"));
  connect(evaluate, &QPushButton::clicked, this, &ComparisonLengths::evaluateAll);
  layout->addWidget(evaluate, 0, Qt::AlignLeft);
  layout->addWidget(chart_, 1);
  chart_->setMinimumSize(320, 520);  // two readable charts in the side column; the metrics below give way
  chart_->setPlaceholder(tr("Not evaluated yet: press Evaluate all (runs that are not training evaluate by themselves)."));
  connect(sweep_, &LengthSweep::curveChanged, this, &ComparisonLengths::redraw);
  redraw();
}

void ComparisonLengths::evaluateAll() {
  for (ComparisonPane* pane : panes_)
    if (auto* view = qobject_cast<LengthView*>(pane->viewInstance().widget)) view->evaluate();
}

void ComparisonLengths::redraw() {
  std::vector<LengthChartLine> lines;
  for (ComparisonPane* pane : panes_) {
    const int run = pane->index();
    const TraceSnapshot* trace = pane->attention()->snapshot();
    QString name = pane->shortName();
    if (trace && trace->model && trace->model->run)
      name += QStringLiteral(", %1").arg(QString::fromStdString(trace->model->run->config.model.positional));
    lines.push_back({name, seriesColour(run, sweep_->runCount()), sweep_->curve(run)});
  }
  chart_->setLines(std::move(lines));
}

}  // namespace attnlab
