#pragma once
// The training charts: loss and validation loss, task accuracy, learning rate, gradient norm per
// layer, attention entropy per layer and the per-layer diagnostics (entropy, previous-token,
// induction, sink on a fixed probe), all against the step. Each chart zooms on its own.
#include <QWidget>
#include <vector>

#include "view_context.h"
#include "view_export.h"

namespace attnlab {

class LayerDiagnosticsChart;
class LossHistoryModel;
class MetricChartView;

class TrainingView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  // The charts' step axis runs to the history's planned steps; compact ones (a comparison pane)
  // are smaller and their hint wraps.
  explicit TrainingView(const ViewContext& context, QWidget* parent = nullptr);

  const std::vector<MetricChartView*>& charts() const { return charts_; }
  LayerDiagnosticsChart* layerDiagnostics() const { return diagnostics_; }
  // Every chart shows the losses delivered so far (a screenshot right after a step).
  void settle();

  QString exportName() const override { return QStringLiteral("training"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  const LossHistoryModel* model_;
  std::vector<MetricChartView*> charts_;
  LayerDiagnosticsChart* diagnostics_;
};

// A distinct colour for layer `layer` of `count` (also used for heads in the head view).
QColor seriesColour(int index, int count);

}  // namespace attnlab
