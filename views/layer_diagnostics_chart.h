#pragma once
// The training view's per-layer attention diagnostics against the step: attention entropy,
// previous-token, induction and sink score of each layer, measured on the run's fixed diagnostics
// probe at every validation step (analysis/layer_diagnostics_probe.h) and kept in its history, so
// an opened run shows them too. A picker chooses the diagnostic; one line per layer.
#include <QWidget>
#include <functional>
#include <vector>

class QComboBox;
class QMenu;
class QStackedWidget;

namespace attnlab {

class LossHistoryModel;
class MetricChartView;
struct LossPoint;

class LayerDiagnosticsChart : public QWidget {
  Q_OBJECT
 public:
  enum Diagnostic { Entropy = 0, PreviousToken, Induction, Sink, DiagnosticCount };

  explicit LayerDiagnosticsChart(const LossHistoryModel* model, QWidget* parent = nullptr);

  void setDiagnostic(Diagnostic diagnostic);
  Diagnostic diagnostic() const;
  MetricChartView* chart(Diagnostic diagnostic) const { return charts_[diagnostic]; }
  QComboBox* picker() const { return picker_; }
  void setTotalSteps(int steps);
  void setMenuExtender(const std::function<void(QMenu*)>& extend);
  void setCompact();

  // The diagnostic's value at `layer` of a history point (NaN where not measured), and its CSV name.
  static double valueOf(Diagnostic diagnostic, const LossPoint& point, int layer);
  static const char* csvName(Diagnostic diagnostic);  // "map_entropy", "previous_token", "induction", "sink"

 private:
  QComboBox* picker_;
  QStackedWidget* stack_;
  MetricChartView* charts_[DiagnosticCount];
};

}  // namespace attnlab
