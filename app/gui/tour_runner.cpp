#include "tour_runner.h"

#include <QMessageBox>
#include <QProgressBar>
#include <QTabBar>
#include <QTabWidget>
#include <algorithm>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "background_job.h"
#include "comparison_window.h"
#include "experiment_files.h"
#include "experiment_panel.h"
#include "forward_pass_view.h"
#include "head_selection.h"
#include "head_table_view.h"
#include "hf/hf_cache.h"
#include "core/random.h"
#include "io/config_json.h"
#include "kv_cache_view.h"
#include "main_window.h"
#include "model_opener.h"
#include "probe_editor.h"
#include "selection_bar.h"
#include "spectra_tab.h"
#include "tour_callout.h"
#include "tour_numbers.h"
#include "training_view.h"

namespace attnlab {

bool TourRunner::StepResult::allHeld() const {
  return done && problem.isEmpty() && std::all_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.held; });
}

TourRunner::TourRunner(MainWindow* window, QObject* parent)
    : QObject(parent), window_(window), callout_(new TourCallout(window)), job_(new BackgroundJob(this)) {
  TrainingSession& session = window_->session();
  connect(&session, &TrainingSession::traced, this, [this](const std::shared_ptr<const TraceSnapshot>& trace) {
    trace_ = trace;
    if (waitingForOpened_ && window_->session().hasOpenedModel()) {
      waitingForOpened_ = false;
      return runNextAction();
    }
    if (!probeWanted_.empty() && trace->trace.tokens == probeWanted_) {
      probeWanted_.clear();
      return runNextAction();
    }
    checkArrival();
  });
  connect(&window_->modelOpener(), &ModelOpener::refused, this, [this](const QString& dir, const QString& message) {
    if (!waitingForOpened_) return;
    waitingForOpened_ = false;
    fail(tr("could not open %1: %2").arg(dir, message));
  });
  connect(&session, &TrainingSession::progressed, this, [this](const ProgressSnapshot& p) {
    progress_ = p;
    hasProgress_ = true;
  });
  connect(&session, &TrainingSession::cleared, this, [this] {
    trace_.reset();
    hasProgress_ = false;
  });
  connect(&session, &TrainingSession::stateChanged, this, [this](TrainingSession::State state) {
    if (trainTarget_ > 0 && state == TrainingSession::State::Failed) fail(tr("training stopped: see the status bar"));
    else checkArrival();
  });
  connect(job_, &BackgroundJob::failed, this, [this](const QString& message) { fail(message); });
  // The tour's own training is discarded without asking; anything else is asked about as usual.
  window_->files().setPrompt([this](const QString& question) {
    if (ownsRun_ && active()) return QMessageBox::Discard;
    return QMessageBox::question(window_, tr("Unsaved steps"), question,
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  });
}

TourRunner::~TourRunner() = default;

void TourRunner::start(const Tour& tour) {
  stop();
  tour_ = tour;
  results_.assign(tour.steps.size(), {});
  kept_.clear();
  target_ = 0;
  lastTrainTarget_ = 0;
  show(0);
}

void TourRunner::stop() {
  ++generation_;
  job_->cancel();
  callout_->point(nullptr, {});
  busy_ = false;
  trainTarget_ = 0;
  until_ = nullptr;
  waitingForOpened_ = false;
  probeWanted_.clear();
  tour_.reset();
  results_.clear();
  setStatus({});
}

bool TourRunner::waitingForPrediction() const {
  if (!active() || busy_) return false;
  const StepResult& r = results_[current_];
  return !r.done && r.problem.isEmpty() && !tour_->steps[current_].question.empty() && !automatic_;
}

bool TourRunner::canGoBack() const { return active() && current_ > 0 && !busy_; }

bool TourRunner::canGoNext() const {
  return active() && !busy_ && current_ + 1 < int(results_.size()) && (results_[current_].done || !results_[current_].problem.isEmpty());
}

void TourRunner::back() {
  if (canGoBack()) show(current_ - 1);
}

void TourRunner::next() {
  if (canGoNext()) goTo(current_ + 1);
}

void TourRunner::restart() {
  if (!active()) return;
  const Tour tour = *tour_;
  start(tour);
}

void TourRunner::goTo(int step) {
  if (!active() || busy_ || step < 0 || step >= int(results_.size())) return;
  target_ = step;
  // The first step not run yet, if it comes before the target, runs first (and so on up to it).
  int first = 0;
  while (first < step && (results_[first].done || !results_[first].problem.isEmpty())) ++first;
  show(first);
}

void TourRunner::show(int step) {
  ++generation_;
  current_ = step;
  callout_->point(nullptr, {});
  const StepResult& r = results_[step];
  if (r.done || !r.problem.isEmpty()) {
    setStatus({});
    emit changed();
    return;
  }
  // A step jumped over on the way to a later one does not wait for its question.
  if (!tour_->steps[step].question.empty() && !automatic_ && step == target_) {
    setStatus(tr("Make your prediction, then the experiment runs."));
    emit changed();
    return;
  }
  runCurrent();
}

void TourRunner::predict(int choice) {
  if (!waitingForPrediction()) return;
  results_[current_].predicted = std::clamp(choice, 0, int(tour_->steps[current_].choices.size()));
  runCurrent();
}

void TourRunner::runCurrent() {
  busy_ = true;
  nextAction_ = 0;
  pendingConfig_.reset();
  emit changed();
  runNextAction();
}

void TourRunner::runNextAction() {
  const TourStep& step = tour_->steps[current_];
  using Kind = TourAction::Kind;
  while (nextAction_ < step.actions.size()) {
    const TourAction& a = step.actions[nextAction_++];
    if (a.kind == Kind::Preset || a.kind == Kind::Set) {
      ExperimentConfig config = pendingConfig_ ? *pendingConfig_ : window_->config();
      const std::string why = a.kind == Kind::Preset ? loadPreset(a.text, config) : applyOverride(config, a.text);
      if (!why.empty()) return fail(QString::fromStdString(why));
      pendingConfig_ = config;
      continue;
    }
    if (!flushExperiment()) return;
    switch (a.kind) {
      case Kind::Train:
        until_ = nullptr;
        lastTrainTarget_ = a.steps;
        return trainTo(a.steps);
      case Kind::TrainUntil: {
        until_ = &a;
        lastTrainTarget_ = a.steps;
        const int done = trace_ ? trace_->step : 0;
        return trainTo(std::min(a.steps, (done / kUntilStride + 1) * kUntilStride));
      }
      case Kind::Pause:
        if (window_->session().state() == TrainingSession::State::Running) {
          window_->session().pause();
          trainTarget_ = std::max(1, trace_ ? trace_->step : 1);
          until_ = nullptr;
          setStatus(tr("Pausing\u2026"));
          return;
        }
        break;
      case Kind::Select: {
        AttentionMapModel& map = window_->attentionMap();
        const TraceSnapshot* s = map.snapshot();
        if (!s || a.layer > int(s->trace.layers.size()) || a.head > int(s->trace.layers[a.layer - 1].heads.size()))
          return fail(tr("line %1: there is no layer %2 head %3 to select (train first?)").arg(a.line).arg(a.layer).arg(a.head));
        window_->selection().select(a.layer - 1, a.head - 1);
        break;
      }
      case Kind::SelectBest: {
        if (!trace_) return fail(tr("line %1: there is no head to select yet (train first)").arg(a.line));
        const std::string base = "best_" + a.text;
        const quint64 generation = generation_;
        setStatus(tr("Finding the head with the highest %1 score\u2026").arg(QString::fromStdString(a.text)));
        return computeNumbers({{base + "_layer", {}}, {base + "_head", {}}}, [this, base, generation](const TourNumbers& n) {
          if (generation != generation_) return;
          window_->selection().select(int(n.at(base + "_layer")) - 1, int(n.at(base + "_head")) - 1);
          runNextAction();
        });
      }
      case Kind::View: window_->showView(QString::fromStdString(a.text)); break;
      case Kind::Compare: {
        std::vector<ExperimentConfig> configs;
        for (const QString& name : QString::fromStdString(a.text).split(QLatin1Char(','))) {
          ExperimentConfig c;
          loadPreset(name.trimmed().toStdString(), c);  // checked when the tour was loaded
          configs.push_back(c);
        }
        auto* comparison = new ComparisonWindow(configs);
        comparison->setAttribute(Qt::WA_DeleteOnClose);
        comparison->show();  // the learner starts it (Train all): two more runs would slow the tour down
        break;
      }
      case Kind::Kv: {
        window_->showView(QStringLiteral("kv"));
        const QString why = window_->view<KvCacheView>()->setEviction(QString::fromStdString(a.text), QString::fromStdString(a.detail));
        if (!why.isEmpty()) return fail(tr("line %1: %2").arg(a.line).arg(why));
        break;
      }
      case Kind::Highlight: {
        QWidget* target = widgetNamed(QString::fromStdString(a.text));
        if (!target) return fail(tr("line %1: there is no widget '%2' to point at").arg(a.line).arg(QString::fromStdString(a.text)));
        callout_->point(target, QString::fromStdString(a.detail));
        break;
      }
      case Kind::OpenedModel:
        if (!useOpenedModel()) return;
        break;
      case Kind::ProbeRepeat:
        if (!trace_ || !trace_->model) return fail(tr("line %1: there is no model to probe yet").arg(a.line));
        return probeRepeat(a);
      case Kind::Preset:
      case Kind::Set: break;
    }
  }
  if (!flushExperiment()) return;
  setStatus(tr("Measuring\u2026"));
  const quint64 generation = generation_;
  computeNumbers(step.calls(), [this, generation](const TourNumbers& numbers) {
    if (generation != generation_) return;
    results_[current_].numbers = numbers;
    finishStep();
  });
}

// The model folder the user opened (or the one being opened), else GPT-2 from the Hugging Face
// cache; nothing is downloaded. True when it is open and traced, so the step goes on at once.
bool TourRunner::useOpenedModel() {
  TrainingSession& session = window_->session();
  if (session.hasOpenedModel() && trace_) return true;
  waitingForOpened_ = true;
  if (session.hasOpenedModel() || window_->modelOpener().busy()) {
    setStatus(tr("Waiting for the opened model's first trace\u2026"));
    return false;
  }
  for (const hf::CachedModel& cached : hf::scanHfCache(hf::hfCacheRoot())) {
    if (cached.model_type != "gpt2" || !cached.problem.empty()) continue;
    setStatus(tr("Opening %1 from the Hugging Face cache\u2026").arg(QString::fromStdString(cached.name)));
    ownsRun_ = true;
    window_->openModelFolder(QString::fromStdString(cached.path));
    return false;
  }
  waitingForOpened_ = false;
  fail(tr("this tour needs a real model: open a model folder first (File > Open Model, or attnlab --tour NAME --model DIR). "
          "No GPT-2 is in the Hugging Face cache (%1), and the lab downloads nothing.")
           .arg(QString::fromStdString(hf::hfCacheRoot())));
  return false;
}

// A random half of `a.steps` tokens (fewer when twice that exceeds the model's context), then the
// same again: an induction head predicts the second half. Ids are drawn from the model's vocabulary.
void TourRunner::probeRepeat(const TourAction& a) {
  const int vocab = trace_->model->model->config().vocab;
  const int context = trace_->model->model->config().context;
  const int half = std::min(a.steps, context / 2);
  if (half < 2) return fail(tr("line %1: the model's context of %2 holds no repeated probe").arg(a.line).arg(context));
  Rng rng(kProbeSeed);
  std::vector<int> tokens(half);
  for (int& t : tokens) t = rng.uniformInt(0, vocab - 1);
  tokens.insert(tokens.end(), tokens.begin(), tokens.end());
  if (trace_->trace.tokens == tokens) return runNextAction();
  probeWanted_ = tokens;
  setStatus(tr("Tracing a repeated random probe\u2026"));
  window_->session().setProbe(tokens);
}

bool TourRunner::flushExperiment() {
  if (!pendingConfig_) return true;
  const ExperimentConfig config = *pendingConfig_;
  pendingConfig_.reset();
  if (const std::string why = validate(config); !why.empty()) {
    fail(QString::fromStdString(why));
    return false;
  }
  if (!window_->applyExperiment(config)) {
    fail(tr("you kept the current experiment, so the tour cannot go on here"));
    return false;
  }
  ownsRun_ = true;
  trace_.reset();
  hasProgress_ = false;
  return true;
}

void TourRunner::trainTo(int step) {
  TrainingSession& session = window_->session();
  using State = TrainingSession::State;
  trainTarget_ = step;
  setStatus(tr("Training to step %1\u2026").arg(step));
  switch (session.state()) {
    case State::Idle:
    case State::Stopped:
    case State::Failed:
      session.setPauseAtStep(step);
      window_->startTraining();
      ownsRun_ = true;
      break;
    case State::Paused:
      if (trace_ && trace_->step >= step) return checkArrival();
      session.setPauseAtStep(step);
      session.resume();
      break;
    case State::Running: session.setPauseAtStep(step); break;
    case State::Finished: checkArrival(); break;
  }
}

// The training has arrived when it is paused (or finished) and the probe traced at that step.
void TourRunner::checkArrival() {
  if (trainTarget_ <= 0 || !trace_) return;
  using State = TrainingSession::State;
  const State state = window_->session().state();
  const bool paused = state == State::Paused && trace_->step >= std::min(trainTarget_, hasProgress_ ? progress_.total_steps : trainTarget_);
  const bool finished = state == State::Finished && hasProgress_ && trace_->step >= progress_.step;
  if (!paused && !finished) return;
  trainTarget_ = 0;
  afterArrival();
}

void TourRunner::afterArrival() {
  if (!until_) return runNextAction();
  const TourAction* until = until_;
  const quint64 generation = generation_;
  setStatus(tr("Step %1: looking at the condition %2\u2026").arg(trace_->step).arg(QString::fromStdString(until->condition.text())));
  computeNumbers(until->condition.calls(), [this, until, generation](const TourNumbers& numbers) {
    if (generation != generation_) return;
    const bool finished = window_->session().state() == TrainingSession::State::Finished;
    const int done = trace_ ? trace_->step : 0;
    if (until->condition.holds(numbers) || done >= until->steps || finished) {
      until_ = nullptr;
      return runNextAction();
    }
    trainTo(std::min(until->steps, done + kUntilStride));
  });
}

void TourRunner::computeNumbers(std::vector<TourCall> calls, std::function<void(const TourNumbers&)> then) {
  TourRunState state;
  state.progress = progress_;
  state.hasProgress = hasProgress_;
  state.trace = trace_;
  state.selectedLayer = window_->selection().layer();
  state.selectedHead = window_->selection().head();
  state.trainTarget = lastTrainTarget_;
  state.kept = kept_;
  job_->submit([calls = std::move(calls), state, then = std::move(then)]() -> BackgroundJob::Delivery {
    auto numbers = std::make_shared<const TourNumbers>(computeTourNumbers(calls, state));
    return [numbers, then] { then(*numbers); };
  });
}

void TourRunner::finishStep() {
  const TourStep& step = tour_->steps[current_];
  StepResult& r = results_[current_];
  r.text = QString::fromStdString(step.text.render(r.numbers));
  r.reveal = QString::fromStdString(step.reveal.render(r.numbers));
  r.checks.clear();
  for (const TourCheck& check : step.checks) {
    const bool held = check.condition.holds(r.numbers);
    r.checks.push_back({held, QString::fromStdString((held ? check.pass : check.fail).render(r.numbers))});
  }
  for (const TourKeep& keep : step.keeps) kept_[keep.name] = keep.expression.evaluate(r.numbers);
  r.done = true;
  busy_ = false;
  setStatus({});
  emit changed();
  emit stepDone(current_);
  if (current_ < target_) show(current_ + 1);
}

void TourRunner::fail(const QString& why) {
  if (!active() || !busy_) return;
  ++generation_;
  trainTarget_ = 0;
  until_ = nullptr;
  busy_ = false;
  results_[current_].problem = why;
  setStatus({});
  emit changed();
  emit stepDone(current_);
}

void TourRunner::setStatus(const QString& text) {
  status_ = text;
  emit changed();
}

// The names a tour may point at; anything else is looked up by object name.
QWidget* TourRunner::widgetNamed(const QString& name) const {
  if (name == QLatin1String("heatmap")) return window_->view<AttentionHeatmapView>();
  if (name == QLatin1String("probe")) return window_->probeEditor();
  if (name == QLatin1String("selection")) return window_->findChild<SelectionBar*>();
  if (name == QLatin1String("tabs")) return window_->tabs();
  if (name == QLatin1String("progress")) return window_->findChild<QProgressBar*>();
  if (name == QLatin1String("panel")) return &window_->experimentPanel();
  if (name == QLatin1String("training")) return window_->view<TrainingView>();
  if (name == QLatin1String("head_table")) return window_->view<HeadTableView>();
  if (name == QLatin1String("kv")) return window_->view<KvCacheView>();
  if (name == QLatin1String("explainer")) return window_->view<ForwardPassView>();
  if (name == QLatin1String("spectra")) return window_->view<SpectraTab>();
  return window_->findChild<QWidget*>(name);
}

}  // namespace attnlab
