#pragma once
// What every view of one run is given (the main window's tabs, each comparison pane): the run's
// data and the objects beside it. A view takes what it needs from here and ignores the rest, so
// adding a field never changes the views that do not use it.
namespace attnlab {

class AttentionMapModel;
class HeadSelection;
class KvPolicyLink;
class LengthSweep;
class LossHistoryModel;
class SharedColourScale;
class TrainingSession;

struct ViewContext {
  AttentionMapModel* attention = nullptr;      // the run's latest probe trace
  HeadSelection* selection = nullptr;          // the layer, head and query shown, beside it
  TrainingSession* session = nullptr;          // the run itself (head gains, probe, saving)
  const LossHistoryModel* history = nullptr;   // the run's loss curve so far
  bool compact = false;                        // shown in a comparison pane, narrower than a tab
  const SharedColourScale* colourScale = nullptr;  // the runs' common scale; null: each map its own
  KvPolicyLink* kvLink = nullptr;              // the runs' common KV-cache policy; null: each view its own
  LengthSweep* lengths = nullptr;              // the runs' length evaluations, one chart for all; null: the view's own
  int run = 0;                                 // this run's index among the compared runs
};

}  // namespace attnlab
