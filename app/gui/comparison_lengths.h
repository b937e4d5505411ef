#pragma once
// The comparison window's length extrapolation: one chart with a line per run (each run's colour
// as its pane's Lengths view draws it), read from the sweep the panes' views evaluate into, and
// an Evaluate all button. Shown beside the panes while they show the Lengths view.
#include <QGroupBox>
#include <vector>

namespace attnlab {

class ComparisonPane;
class LengthChart;
class LengthSweep;

class ComparisonLengths : public QGroupBox {
  Q_OBJECT
 public:
  ComparisonLengths(std::vector<ComparisonPane*> panes, LengthSweep* sweep, QWidget* parent = nullptr);

  LengthChart* chart() const { return chart_; }
  void evaluateAll();  // each pane's Lengths view evaluates its run's latest model

 private:
  void redraw();

  std::vector<ComparisonPane*> panes_;
  LengthSweep* sweep_;
  LengthChart* chart_;
};

}  // namespace attnlab
