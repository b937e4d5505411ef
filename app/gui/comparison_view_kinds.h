#pragma once
// The views a comparison can show for each of its runs (one picker for all panes). A kind makes
// one view per run from that run's models; a new single-run view becomes available in the
// comparison by adding one line to comparisonViewKinds() in comparison_view_kinds.cpp.
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

class QWidget;

namespace attnlab {

class AttentionMapModel;
class LossHistoryModel;
class TrainingSession;

struct ComparisonViewKind {
  using Factory = std::function<QWidget*(AttentionMapModel* attention, TrainingSession* session, LossHistoryModel* history, QWidget* parent)>;
  QString id;     // command-line and file name, e.g. "attention"
  QString title;  // what the picker shows
  Factory make;
};

// In picker order.
const std::vector<ComparisonViewKind>& comparisonViewKinds();
QStringList comparisonViewKindIds();
int comparisonViewKindIndex(const QString& id);  // -1 when unknown

// The factory of every view built on the standard view contract, View(attention, session, parent).
template <class View>
ComparisonViewKind::Factory standardViewFactory() {
  return [](AttentionMapModel* attention, TrainingSession* session, LossHistoryModel*, QWidget* parent) -> QWidget* {
    return new View(attention, session, parent);
  };
}

}  // namespace attnlab
