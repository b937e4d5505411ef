#pragma once
// The forward-pass explainer: for the selected head and a query token of the probe, the head's
// computation with the run's own numbers, one stage at a time (Next / Back): the query vector,
// the visible keys, the scores q·k/√d, the positional bias, the causal mask, the normalisation
// (softmax, sigmoid, or the variant's own), the weights, and the weighted sum of the values that
// is the head's output. Small matrices are drawn as coloured cells with their numbers; hover a
// cell for its formula and the numbers it came from. It follows the selection and the probe.
#include <QWidget>

#include "forward_pass.h"
#include "view_context.h"
#include "view_export.h"

class QLabel;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace attnlab {

class AttentionMapModel;
class HeadSelection;
class CellGrid;

class ForwardPassView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  enum Stage { Query, Keys, Scores, Bias, Mask, Weights, Output, StageCount };

  ForwardPassView(const ViewContext& context, QWidget* parent = nullptr);

  int stage() const { return stage_; }
  void setStage(int stage);
  void setQuery(int position);  // 0-based; -1: the probe's last token
  int query() const;
  bool hasPass() const { return hasPass_; }
  const ForwardPass& pass() const { return pass_; }
  // The output cells as drawn (for tests: what the view shows is the trace's computation).
  std::vector<double> shownOutput() const;

  QString exportName() const override;
  QWidget* exportWidget() override;
  bool hasExportData() const override { return hasPass_; }
  void writeCsv(QTextStream& out) const override;

 private:
  void rebuild();
  void showStages();

  AttentionMapModel* attention_;
  HeadSelection* selection_;
  QSpinBox* queryPicker_;
  QPushButton* back_;
  QPushButton* next_;
  QLabel* heading_;
  QWidget* page_;
  std::vector<QWidget*> sections_;  // one per stage
  std::vector<QLabel*> notes_;
  CellGrid *qGrid_, *kGrid_, *scoreGrid_, *biasGrid_, *maskGrid_, *weightGrid_, *vGrid_, *outGrid_;
  ForwardPass pass_;
  bool hasPass_ = false;
  int stage_ = StageCount - 1;
  bool followLast_ = true;  // the query follows the probe's last token until one is picked
};

}  // namespace attnlab
