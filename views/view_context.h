#pragma once
// What every view of one run is given (the main window's tabs, each comparison pane): the run's
// data and the objects beside it. A view takes what it needs from here and ignores the rest, so
// adding a field never changes the views that do not use it.
namespace attnlab {

class AttentionMapModel;
class LossHistoryModel;
class TrainingSession;

struct ViewContext {
  AttentionMapModel* attention = nullptr;      // the run's latest probe trace
  TrainingSession* session = nullptr;          // the run itself (head gains, probe, saving)
  const LossHistoryModel* history = nullptr;   // the run's loss curve so far
  bool compact = false;                        // shown in a comparison pane, narrower than a tab
};

}  // namespace attnlab
