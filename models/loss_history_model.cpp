#include "loss_history_model.h"

#include <algorithm>
#include <cmath>

namespace attnlab {

void LossHistoryModel::append(const std::vector<LossPoint>& points) {
  if (points.empty()) return;
  const int first = static_cast<int>(points_.size());
  beginInsertRows({}, first, first + static_cast<int>(points.size()) - 1);
  points_.insert(points_.end(), points.begin(), points.end());
  endInsertRows();
}

void LossHistoryModel::clear() {
  beginResetModel();
  points_.clear();
  endResetModel();
}

int LossHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(points_.size());
}

int LossHistoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LossHistoryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || (role != Qt::DisplayRole && role != Qt::EditRole)) return {};
  const LossPoint& p = points_[index.row()];
  auto measured = [](double v) { return std::isnan(v) ? QVariant() : QVariant(v); };
  switch (index.column()) {
    case StepColumn: return p.step;
    case LossColumn: return p.loss;
    case ValLossColumn: return measured(p.val_loss);
    case AccuracyColumn: return measured(p.accuracy);
  }
  return {};
}

QVariant LossHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case StepColumn: return tr("Step");
    case LossColumn: return tr("Loss");
    case ValLossColumn: return tr("Validation loss");
    case AccuracyColumn: return tr("Accuracy");
  }
  return {};
}

void LossHistoryModel::setPlannedSteps(int steps) {
  if (steps == plannedSteps_) return;
  plannedSteps_ = steps;
  emit plannedStepsChanged();
}

void LossHistoryModel::setPlannedLayers(int layers) {
  if (layers == plannedLayers_) return;
  plannedLayers_ = layers;
  emit plannedLayersChanged();
}

LossPoint LossHistoryModel::plannedShape() const {
  LossPoint p;
  p.layer_grad_norm.assign(std::max(0, plannedLayers_), kNotMeasured);
  p.layer_entropy.assign(std::max(0, plannedLayers_), kNotMeasured);
  return p;
}

}  // namespace attnlab
