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
  // Its layer count, so per-layer charts list the new run's layers before its first step.
  int plannedLayers() const { return plannedLayers_; }
  void setPlannedLayers(int layers);
  void setPlan(int steps, int layers) { setPlannedSteps(steps), setPlannedLayers(layers); }
  // A point shaped as the planned run's first will be (per-layer values for plannedLayers()
  // layers), every value not measured: what charts build their series from before any row.
  LossPoint plannedShape() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void plannedStepsChanged();
  void plannedLayersChanged();

 private:
  std::vector<LossPoint> points_;
  int plannedSteps_ = 0;
  int plannedLayers_ = 0;
};

}  // namespace attnlab
