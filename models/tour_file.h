#pragma once
// A tour: one text file in resources/tours/ (NAME.tour), a lesson in steps that drive the app and
// state only what the learner's own run shows. The format (the user guide's "Writing a tour"):
//
//   # Title of the tour                      first line
//   @summary One line for the tour list.
//   @duration about 3 minutes on 2 cores
//   @short-note  The short variant (--short, what ctest runs): what it changes and why its checks
//                still hold. Needed when the file has a short variant:
//   @short-set train.batch=8             applied after every experiment the short run opens
//   @train 150 short 60                       in a step: the short run trains to 60 instead
//   @train-until 400 short 150 COND           ... or looks for COND up to 150 steps
//   @order 2                                 place in the tour list (optional; then by name)
//
//   ## Title of a step                        each step starts so
//   Markdown text; {expression} and {expression:.2f} show live numbers (tour_expression.h).
//   @preset induction                         actions, run in order when the step starts:
//   @set train.steps=300                        preset NAME, set KEY=VALUE (re-applies the
//   @train 200                                  experiment), train N (to step N, then pause),
//   @train-until 600 induction(2,1) > 0.3       train-until MAX CONDITION (checked every 25 steps),
//   @select 2 1                                 pause, select L H, select-best induction|prev_token|sink|patch
//                                               (the head scoring highest), view NAME, compare A,B,
//   @view attention                             kv POLICY BUDGET, highlight WIDGET text of the callout,
//   @opened-model                               opened-model (the model folder the user opened, or
//   @probe-repeat 20                            GPT-2 from the Hugging Face cache; refused without
//                                               one), probe-repeat N (a random N tokens, twice; fewer when the context is shorter)
//   @predict Which key will it pick?          optional question, asked before the actions run;
//   @choice The previous token                  its choices, and the right one (1-based), shown
//   @choice The token after the earlier copy    with @reveal's text after the experiment
//   @answer 2
//   @reveal Markdown with {numbers}.
//   @check induction(2,1) > 0.3               a check, and what the panel says when it holds
//   @pass Head 2.1 is an induction head ({induction(2,1):.2f}).   or when it fails
//   @fail In this run the head did not form yet: train 200 more steps or try seed 2.
//   @keep rope_loss length_loss(4)            after the step, keeps a number under a name that
//                                               later steps read as kept(rope_loss)
//
// Lines starting with "//" are comments. Every expression is parsed when the file loads, against
// the numbers a tour may use (tour_numbers.h), so a typo is found then and not in front of a class.
#include <string>
#include <vector>

#include "tour_expression.h"

namespace attnlab {

struct TourAction {
  enum class Kind { Preset, Set, Train, TrainUntil, Pause, Select, SelectBest, View, Compare, Kv, Highlight, OpenedModel, ProbeRepeat };
  Kind kind = Kind::Pause;
  int line = 0;
  std::string text;          // preset / view name, KEY=VALUE, compare list, kv policy, widget name, select-best score
  std::string detail;        // kv budget, highlight callout text
  int steps = 0;             // train, train-until (the most steps), probe-repeat (tokens per half)
  int shortSteps = 0;        // the same in the short variant (0: as `steps`)
  int layer = 0, head = 0;   // select, 1-based
  TourExpression condition;  // train-until
};

struct TourCheck {
  int line = 0;
  TourExpression condition;
  TourTemplate pass, fail;
};

// A number a later step compares against: `expression` evaluated when the step's numbers are in.
struct TourKeep {
  int line = 0;
  std::string name;
  TourExpression expression;
};

struct TourStep {
  int line = 0;
  std::string title;
  TourTemplate text;  // Markdown
  std::vector<TourAction> actions;
  std::string question;
  std::vector<std::string> choices;
  int answer = 0;  // 1-based; 0 without a question
  TourTemplate reveal;
  std::vector<TourCheck> checks;
  std::vector<TourKeep> keeps;

  // Every live number the step's text, reveal, conditions and checks name.
  std::vector<TourCall> calls() const;
};

struct Tour {
  std::string name;  // the file's base name
  std::string title, summary, duration;
  std::string shortNote;               // what the short variant changes ("" when it has none)
  std::vector<std::string> shortSets;  // KEY=VALUE, on top of every experiment of the short run
  int order = 1000;
  std::vector<TourStep> steps;

  bool hasShortVariant() const;
};

// The tour as its short variant runs (the tour itself when it has none): every train and
// train-until action at its short step count, and the @short-set assignments applied after each
// step's @preset / @set lines, so they win over the experiment's own values.
Tour shortVariant(const Tour& tour);

// Parses a tour's text. Returns "" or "FILE:LINE: reason" (FILE is `fileName`). Preset names
// and --set assignments are checked against the engine; view names against `views` unless empty.
std::string parseTour(const std::string& text, const std::string& name, const std::string& fileName, Tour& out,
                      const std::vector<std::string>& views = {});

}  // namespace attnlab
