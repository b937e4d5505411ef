#include "tour_file.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "io/config_json.h"
#include "tour_numbers.h"

namespace attnlab {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

bool parseWhole(const std::string& s, int& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) return false;
  out = std::stoi(s);
  return out > 0;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

bool isName(const std::string& s) {
  return !s.empty() && !std::isdigit((unsigned char)s[0]) && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

class TourParser {
 public:
  TourParser(const std::string& fileName, const std::vector<std::string>& views) : file_(fileName), views_(views) {}

  std::string run(const std::string& text, Tour& tour) {
    std::istringstream in(text);
    std::string raw;
    std::vector<std::string> markdown;  // the current step's text lines
    int lineNo = 0;
    auto finishStep = [&]() -> std::string {
      if (tour.steps.empty()) return {};
      TourStep& step = tour.steps.back();
      std::string joined;
      for (const std::string& l : markdown) joined += l + "\n";
      markdown.clear();
      if (const std::string why = TourTemplate::parse(trim(joined), step.text, checkTourCall); !why.empty())
        return at(step.line, "in the text of step \"" + step.title + "\": " + why);
      if (!step.question.empty() && step.choices.size() < 2) return at(step.line, "@predict needs at least two @choice lines");
      if (!step.question.empty() && (step.answer < 1 || step.answer > int(step.choices.size())))
        return at(step.line, "@predict needs @answer N with N from 1 to " + std::to_string(step.choices.size()));
      for (const TourCall& call : step.calls())
        if (call.name == "kept" && !kept_.count(call.args.at(0)))
          return at(step.line, "kept(" + call.args.at(0) + ") names no number an earlier step keeps (@keep " + call.args.at(0) + " ...)");
      for (const TourKeep& k : step.keeps) kept_.insert(k.name);
      return {};
    };
    while (std::getline(in, raw)) {
      ++lineNo;
      line_ = lineNo;
      const std::string line = trim(raw);
      if (lineNo == 1) {
        if (line.rfind("# ", 0) != 0) return here("a tour starts with its title: '# Title'");
        tour.title = trim(line.substr(2));
        continue;
      }
      if (line.rfind("//", 0) == 0) continue;
      if (line.rfind("## ", 0) == 0) {
        if (const std::string why = finishStep(); !why.empty()) return why;
        TourStep step;
        step.line = lineNo;
        step.title = trim(line.substr(3));
        tour.steps.push_back(std::move(step));
        continue;
      }
      if (line.empty() || line[0] != '@') {
        if (tour.steps.empty()) {
          if (!line.empty()) return here("text before the first step ('## Step title')");
        } else {
          markdown.push_back(raw);
        }
        continue;
      }
      const size_t space = line.find_first_of(" \t");
      const std::string directive = line.substr(1, space == std::string::npos ? std::string::npos : space - 1);
      const std::string rest = space == std::string::npos ? std::string() : trim(line.substr(space));
      if (tour.steps.empty()) {
        if (const std::string why = header(directive, rest, tour); !why.empty()) return here(why);
      } else if (const std::string why = stepLine(directive, rest, tour.steps.back()); !why.empty()) {
        return here(why);
      }
    }
    if (lineNo == 0) return at(1, "the file is empty");
    if (const std::string why = finishStep(); !why.empty()) return why;
    if (tour.steps.empty()) return at(lineNo, "the tour has no steps ('## Step title')");
    if (tour.summary.empty()) return at(1, "the tour needs '@summary ...' in its header");
    if (tour.hasShortVariant() && tour.shortNote.empty())
      return at(1, "the tour has a short variant (@short-set or 'short N'), so its header needs '@short-note ...' saying what it changes");
    if (!tour.shortNote.empty() && !tour.hasShortVariant())
      return at(1, "@short-note describes a short variant, but no @short-set or 'short N' makes one");
    return {};
  }

 private:
  std::string at(int line, const std::string& why) const { return file_ + ":" + std::to_string(line) + ": " + why; }
  std::string here(const std::string& why) const { return at(line_, why); }

  std::string header(const std::string& d, const std::string& rest, Tour& tour) {
    if (d == "summary") tour.summary = rest;
    else if (d == "duration") tour.duration = rest;
    else if (d == "short-note") tour.shortNote = rest;
    else if (d == "short-set") {
      ExperimentConfig config;
      loadPreset("default", config);
      if (const std::string why = applyOverride(config, rest); !why.empty()) return "in @short-set: " + why;
      tour.shortSets.push_back(rest);
    }
    else if (d == "order") {
      if (!parseWhole(rest, tour.order)) return "@order needs a positive whole number";
    } else return "unknown header line '@" + d + "' (summary, duration, short-note, short-set, order)";
    return {};
  }

  std::string stepLine(const std::string& d, const std::string& rest, TourStep& step) {
    using Kind = TourAction::Kind;
    TourAction a;
    a.line = line_;
    if (d == "preset") {
      ExperimentConfig config;
      if (const std::string why = loadPreset(rest, config); !why.empty()) return why;
      a.kind = Kind::Preset;
      a.text = rest;
    } else if (d == "set") {
      ExperimentConfig config;
      loadPreset("default", config);
      if (const std::string why = applyOverride(config, rest); !why.empty()) return why;
      a.kind = Kind::Set;
      a.text = rest;
    } else if (d == "train") {
      a.kind = Kind::Train;
      std::string after;
      if (!parseSteps(rest, a, after) || !after.empty())
        return "@train needs the step to train to, a positive whole number, and optionally 'short N': '@train 150 short 60'";
    } else if (d == "train-until") {
      a.kind = Kind::TrainUntil;
      std::string condition;
      if (!parseSteps(rest, a, condition) || condition.empty())
        return "@train-until needs the most steps and a condition: '@train-until 600 induction(2,1) > 0.3' (or '600 short 200 ...')";
      if (const std::string why = TourExpression::parse(condition, a.condition, checkTourCall); !why.empty())
        return "in the condition: " + why;
    } else if (d == "pause") {
      a.kind = Kind::Pause;
    } else if (d == "select") {
      a.kind = Kind::Select;
      const auto w = words(rest);
      if (w.size() != 2 || !parseWhole(w[0], a.layer) || !parseWhole(w[1], a.head)) return "@select needs a layer and a head: '@select 2 1'";
    } else if (d == "select-best") {
      a.kind = Kind::SelectBest;
      a.text = rest;
      if (rest != "induction" && rest != "prev_token" && rest != "sink" && rest != "patch")
        return "@select-best needs induction, prev_token, sink or patch";
    } else if (d == "opened-model") {
      a.kind = Kind::OpenedModel;
      if (!rest.empty()) return "@opened-model takes nothing: it uses the model folder the user opened";
    } else if (d == "probe-repeat") {
      a.kind = Kind::ProbeRepeat;
      if (!parseWhole(rest, a.steps)) return "@probe-repeat needs the tokens of the random half, a positive whole number";
    } else if (d == "view") {
      a.kind = Kind::View;
      a.text = rest;
      if (!views_.empty() && std::find(views_.begin(), views_.end(), rest) == views_.end()) {
        std::string list;
        for (const std::string& v : views_) list += (list.empty() ? "" : ", ") + v;
        return "unknown view '" + rest + "' (" + list + ")";
      }
    } else if (d == "compare") {
      a.kind = Kind::Compare;
      a.text = rest;
      std::istringstream names(rest);
      int count = 0;
      for (std::string name; std::getline(names, name, ',');) {
        ExperimentConfig config;
        if (const std::string why = loadPreset(trim(name), config); !why.empty()) return why;
        ++count;
      }
      if (count < 2 || count > 4) return "@compare needs 2 to 4 presets separated by commas";
    } else if (d == "kv") {
      a.kind = Kind::Kv;
      const auto w = words(rest);
      if (w.size() != 2) return "@kv needs a policy and a budget: '@kv streaming_llm 8'";
      a.text = w[0];
      a.detail = w[1];
    } else if (d == "highlight") {
      a.kind = Kind::Highlight;
      const size_t space = rest.find(' ');
      if (rest.empty()) return "@highlight needs a widget name and the callout's text";
      a.text = rest.substr(0, space);
      a.detail = space == std::string::npos ? std::string() : trim(rest.substr(space));
    } else if (d == "predict") {
      step.question = rest;
      return rest.empty() ? "@predict needs the question" : std::string();
    } else if (d == "choice") {
      if (step.question.empty()) return "@choice comes after @predict";
      step.choices.push_back(rest);
      return {};
    } else if (d == "answer") {
      if (!parseWhole(rest, step.answer)) return "@answer needs the right choice's number (1-based)";
      return {};
    } else if (d == "reveal") {
      if (const std::string why = TourTemplate::parse(rest, step.reveal, checkTourCall); !why.empty()) return "in @reveal: " + why;
      return {};
    } else if (d == "check") {
      TourCheck check;
      check.line = line_;
      if (const std::string why = TourExpression::parse(rest, check.condition, checkTourCall); !why.empty()) return "in @check: " + why;
      step.checks.push_back(std::move(check));
      return {};
    } else if (d == "keep") {
      TourKeep keep;
      keep.line = line_;
      const size_t space = rest.find(' ');
      keep.name = rest.substr(0, space);
      if (space == std::string::npos || !isName(keep.name)) return "@keep needs a name and an expression: '@keep rope_loss length_loss(4)'";
      if (const std::string why = TourExpression::parse(trim(rest.substr(space)), keep.expression, checkTourCall); !why.empty())
        return "in @keep: " + why;
      step.keeps.push_back(std::move(keep));
      return {};
    } else if (d == "pass" || d == "fail") {
      if (step.checks.empty()) return "@" + d + " comes after a @check";
      TourTemplate& t = d == "pass" ? step.checks.back().pass : step.checks.back().fail;
      if (const std::string why = TourTemplate::parse(rest, t, checkTourCall); !why.empty()) return "in @" + d + ": " + why;
      return {};
    } else {
      return "unknown line '@" + d +
             "' (preset, set, train, train-until, pause, select, select-best, view, compare, kv, highlight, opened-model, probe-repeat, predict, choice, answer, reveal, check, pass, fail, keep)";
    }
    step.actions.push_back(std::move(a));
    return {};
  }

  // "N [short M] REST": the steps, the short variant's steps (at most N), and what follows.
  static bool parseSteps(const std::string& text, TourAction& a, std::string& rest) {
    const auto nextWord = [&rest](std::string& word) {
      const size_t end = rest.find_first_of(" \t");
      word = rest.substr(0, end);
      rest = end == std::string::npos ? std::string() : trim(rest.substr(end));
    };
    std::string word;
    rest = trim(text);
    nextWord(word);
    if (!parseWhole(word, a.steps)) return false;
    if (rest.rfind("short", 0) != 0 || (rest.size() > 5 && rest[5] != ' ' && rest[5] != '\t')) return true;
    nextWord(word);
    nextWord(word);
    return parseWhole(word, a.shortSteps) && a.shortSteps <= a.steps;
  }

  std::string file_;
  const std::vector<std::string>& views_;
  std::set<std::string> kept_;  // names kept by the steps so far
  int line_ = 0;
};

}  // namespace

std::vector<TourCall> TourStep::calls() const {
  std::vector<TourCall> all = text.calls();
  const auto add = [&all](const std::vector<TourCall>& more) { all.insert(all.end(), more.begin(), more.end()); };
  add(reveal.calls());
  for (const TourAction& a : actions) add(a.condition.calls());
  for (const TourKeep& k : keeps) add(k.expression.calls());
  for (const TourCheck& c : checks) {
    add(c.condition.calls());
    add(c.pass.calls());
    add(c.fail.calls());
  }
  return all;
}

bool Tour::hasShortVariant() const {
  if (!shortSets.empty()) return true;
  for (const TourStep& step : steps)
    for (const TourAction& a : step.actions)
      if (a.shortSteps > 0) return true;
  return false;
}

Tour shortVariant(const Tour& tour) {
  Tour out = tour;
  using Kind = TourAction::Kind;
  const auto opensExperiment = [](const TourAction& a) { return a.kind == Kind::Preset || a.kind == Kind::Set; };
  for (TourStep& step : out.steps) {
    std::vector<TourAction> actions;
    for (size_t i = 0; i < step.actions.size(); ++i) {
      TourAction a = step.actions[i];
      if (a.shortSteps > 0) a.steps = a.shortSteps;
      const bool closesRun = opensExperiment(a) && (i + 1 == step.actions.size() || !opensExperiment(step.actions[i + 1]));
      actions.push_back(std::move(a));
      if (!closesRun) continue;
      for (const std::string& assignment : tour.shortSets) {
        TourAction set;
        set.kind = Kind::Set;
        set.line = actions.back().line;
        set.text = assignment;
        actions.push_back(std::move(set));
      }
    }
    step.actions = std::move(actions);
  }
  return out;
}

std::string parseTour(const std::string& text, const std::string& name, const std::string& fileName, Tour& out,
                      const std::vector<std::string>& views) {
  Tour tour;
  tour.name = name;
  TourParser parser(fileName, views);
  if (std::string why = parser.run(text, tour); !why.empty()) return why;
  out = std::move(tour);
  return {};
}

}  // namespace attnlab
