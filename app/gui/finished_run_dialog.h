#pragma once
// Train on a finished run (opened from a folder, or just completed) asks what to do rather than
// discarding the trained weights: continue N more steps, or start over from step 0.
#include <functional>

class QWidget;

namespace attnlab {

struct FinishedRunChoice {
  enum class Action { Continue, StartOver, Cancel };
  Action action = Action::Cancel;
  int moreSteps = 0;  // for Continue
};
// Asks about a run that has done `stepsDone` steps, all it planned.
using FinishedRunPrompt = std::function<FinishedRunChoice(int stepsDone)>;

// The dialog: "Continue N more steps" (N defaults to the steps done) / "Start over" / Cancel.
FinishedRunChoice askAboutFinishedRun(QWidget* parent, int stepsDone);

}  // namespace attnlab
