#pragma once
// The loss curve of the current run as a table (step, loss, validation loss, accuracy),
// appended to as the training session reports steps.
#include <QAbstractTableModel>
#include <vector>

#include "snapshots.h"

namespace attnlab {

class LossHistoryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { StepColumn, LossColumn, ValLossColumn, AccuracyColumn, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;

  const std::vector<LossPoint>& points() const { return points_; }
  void append(const std::vector<LossPoint>& points);
  void clear();
  // The run's length as configured, so charts can lay out their step axis before it is trained.
  int plannedSteps() const { return plannedSteps_; }
  void setPlannedSteps(int steps);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void plannedStepsChanged();

 private:
  std::vector<LossPoint> points_;
  int plannedSteps_ = 0;
};

}  // namespace attnlab
