#pragma once
// Training loss (every step) and validation loss (every evaluation) against the step, read from
// a LossHistoryModel. Both axes follow the data.
#include <QChartView>

class QLineSeries;
class QValueAxis;

namespace attnlab {

class LossHistoryModel;

class LossChartView : public QChartView {
  Q_OBJECT
 public:
  explicit LossChartView(const LossHistoryModel* model, QWidget* parent = nullptr);

  // The run's length: the step axis never reaches past it (0: no limit).
  void setTotalSteps(int steps);

 private:
  void appendRows(int first, int last);
  void reload();
  void updateRanges();

  const LossHistoryModel* model_;
  QLineSeries* train_;
  QLineSeries* validation_;
  QValueAxis* stepAxis_;
  QValueAxis* lossAxis_;
  int totalSteps_ = 0;
  double lowest_ = 0;
  double highest_ = 0;
};

}  // namespace attnlab
