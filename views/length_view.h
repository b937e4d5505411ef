#pragma once
// The Lengths view: the run's latest model evaluated on sequences longer than it was trained on
// (length extrapolation), accuracy and loss against the multiple of the training length. The
// evaluation runs on a worker (LengthSweep) when the user presses Evaluate, and by itself while
// the view is shown and the run is not training (paused, finished, opened). In a comparison pane
// the context's shared sweep holds every run's curve, which the window draws in one chart.
#include <QWidget>
#include <vector>

#include "view_context.h"
#include "view_export.h"

class QLabel;
class QLineEdit;
class QPushButton;

namespace attnlab {

class AttentionMapModel;
class LengthChart;
class LengthSweep;
class TrainingSession;

class LengthView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  explicit LengthView(const ViewContext& context, QWidget* parent = nullptr);

  LengthChart* chart() const { return chart_; }
  LengthSweep* sweep() const { return sweep_; }
  // Evaluates the latest snapshot at the multiples in the field; false (and the reason shown)
  // when the field does not parse or there is no model yet.
  bool evaluate();
  // Blocks until the latest snapshot's evaluation is shown (screenshots, tests, --export).
  void settle();

  QString exportName() const override;
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void followTrace();  // evaluates by itself when shown and not training
  void showCurve();
  bool needsEvaluation() const;

  AttentionMapModel* attention_;
  TrainingSession* session_;
  LengthSweep* sweep_;
  int run_ = 0;
  int runs_ = 1;
  QLineEdit* multiples_;
  QPushButton* evaluate_;
  QLabel* status_;
  LengthChart* chart_;
};

}  // namespace attnlab
