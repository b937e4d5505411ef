#include "training_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>
#include <stdexcept>
#include <utility>

#include "analysis/analysis.h"
#include "analysis/layer_diagnostics_probe.h"
#include "io/checkpoint.h"
#include "queued_call.h"
#include "step_timer.h"
#include "train/qk_guard.h"
#include "train/trainer.h"

#include "worker_priority.h"

#ifdef __linux__
#include <pthread.h>
#endif

namespace attnlab {

namespace {
using Clock = std::chrono::steady_clock;
// At most ~10 probe traces per second: enough for a live heatmap, cheap beside training.
constexpr auto kTraceInterval = std::chrono::milliseconds(100);
// And at most about a quarter of the worker's time: after a trace, training runs at least this
// many times as long as the trace took before the next one. A 1,024-token probe of a 12 x 12-head
// model takes seconds to trace (every head's map copied out), which after every step would leave
// training a third of the worker.
constexpr int kTrainingPerTraceTime = 3;
// Weight of the newest step in the smoothed rates (an exponential moving average).
constexpr double kRateSmoothing = 0.1;
// The fixed validation sample every model snapshot of a run carries for the analyses.
constexpr int kSnapshotEvalBatches = 4;
constexpr uint64_t kSnapshotEvalSeed = 1;

// Stream of the "draw a fresh example" probes, apart from the trainer's fixed probe.
constexpr uint64_t kProbeDrawStream = 0x5bd1e9955bd1e995ull;

double smooth(double average, double sample, bool first) {
  return first ? sample : average + kRateSmoothing * (sample - average);
}

LossPoint lossPointOf(const TrainPoint& step) {
  return {step.step,          step.loss,          step.val_loss,      step.accuracy,         step.lr,
          step.grad_norm,     step.layer_grad_norm, step.layer_entropy, step.layer_diagnostics};
}

// Appends the QK-guard messages of `step` to `note`.
void addQkGuardNote(const TrainPoint& step, double threshold, std::string& note) {
  for (int layer : step.qk_guard_switched)
    note += (note.empty() ? "" : "; ") + qkGuardMessage(step.step, layer, switchScore(step, layer), threshold);
}

// Where a restored experiment stands, as the progress bar shows it.
ProgressSnapshot progressOf(const Trainer& trainer) {
  ProgressSnapshot progress;
  progress.total_steps = trainer.config().train.steps;
  progress.step = trainer.stepsDone();
  for (const TrainPoint& p : trainer.history()) {
    progress.loss = p.loss;
    progress.lr = p.lr;
    addQkGuardNote(p, trainer.config().train.qk_guard, progress.qk_guard);
    if (!std::isnan(p.val_loss)) {
      progress.val_loss = p.val_loss;
      progress.accuracy = p.accuracy;
    }
  }
  return progress;
}

// The finished run `done` with `more` steps planned beyond its end, all else as it stands: weights,
// history, AdamW's moments and the data stream. The new steps train at the rate the schedule ends
// at: lr becomes lr * min_lr_ratio, min_lr_ratio 1 and the warm-up at most the steps done, so the
// (now flat) schedule gives that rate at every new step; history.csv keeps every step's real rate.
std::unique_ptr<Trainer> extendedRun(const Trainer& done, int more) {
  ExperimentConfig config = done.config();
  config.model = done.model().config();
  config.train.steps += more;
  config.train.lr *= config.train.min_lr_ratio;
  config.train.min_lr_ratio = 1;
  config.train.warmup = std::min(config.train.warmup, done.stepsDone());
  auto model = std::make_unique<Model>(config.model, config.train.seed);
  const auto& from = done.model().params().all();
  auto& to = model->params().all();
  for (size_t i = 0; i < to.size(); ++i) to[i]->value = from[i]->value;
  auto extended = std::make_unique<Trainer>(config, std::move(model), done.history());
  const AdamW& optimizer = done.optimizer();
  if (!extended->restoreTrainingState(optimizer.steps(), optimizer.firstMoments(), optimizer.secondMoments(),
                                      done.dataStream().state()))
    throw std::runtime_error("the optimiser state does not fit the extended run");
  extended->qkHistory() = done.qkHistory();  // the Spectra slider keeps the run's past
  return extended;
}

}  // namespace

struct TrainingSession::WorkerProbe {
  std::vector<int> tokens;
  Rng draws;
  std::shared_ptr<const Vocabulary> vocabulary;
  std::shared_ptr<const RunData> run;
  std::vector<std::vector<float>> headGains;  // applied to traces and snapshots, never to training
  int tracedStep = -1;  // the step of the last published trace, -1 none since the probe changed
};

struct TrainingSession::Run {
  quint64 id = 0;
  // UI thread: started by launch(), joined by joinWorker() or, once the run is retired, by dispose().
  std::thread thread;
  int savesAwaited = 0;  // UI thread: save requests handed to the worker and not yet reported

  // Set before the worker starts. Then used only by the worker while it lives, and after the join
  // only by the UI thread, or by the pool thread the run was disposed on. A retired worker frees
  // its trainer or model itself when it ends.
  std::optional<ExperimentConfig> config;  // none: go on with `trainer` (open(), continueFor())
  int continueSteps = 0;                   // continueFor(): the worker extends the run by this many steps
  std::unique_ptr<Trainer> trainer;
  // An opened model instead of a trainer (openModel()).
  std::unique_ptr<Model> openedModel;
  std::shared_ptr<const Vocabulary> openedVocabulary;
  std::vector<int> openedProbe;
  std::string openedName;

  std::mutex mutex;
  std::condition_variable wake;  // pause/resume/stop/step/save/probe changes, for a waiting worker
  std::atomic<bool> pauseRequested{false};
  std::atomic<bool> stopRequested{false};
  std::atomic<bool> retired{false};  // discarded: nothing it publishes is delivered; it frees what it holds
  std::atomic<bool> notificationQueued{false};
  std::atomic<bool> probeRequested{false};
  // Guarded by mutex:
  std::optional<ProbeRequest> probeRequest;
  std::optional<HeadGains> gainsRequest;
  int stepsGranted = 0;  // single steps asked for while paused
  std::vector<SaveRequest> saveRequests;
  bool workerDone = false;  // the worker takes no more requests
  Mailbox mailbox;
};

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) {}

TrainingSession::~TrainingSession() {
  if (run_) {
    run_->retired = true;  // nothing it publishes now is delivered
    requestStop(*run_);
    dispose(std::move(run_));
  }
  disposal_.waitForDone();  // every retired worker is joined, every discarded model freed
}

QString TrainingSession::stateName(State state) {
  switch (state) {
    case State::Idle: return tr("Ready");
    case State::Running: return tr("Training");
    case State::Paused: return tr("Paused");
    case State::Finished: return tr("Finished");
    case State::Stopped: return tr("Stopped");
    case State::Failed: return tr("Failed");
  }
  return {};
}

// ---- UI thread -------------------------------------------------------------------------------

void TrainingSession::start(const ExperimentConfig& config) {
  dispose(detachRun());
  emit cleared();
  std::shared_ptr<Run> run = newRun();
  run->config = config;
  launch(std::move(run));
  setState(State::Running);
}

void TrainingSession::open(std::unique_ptr<Trainer> trainer) {
  dispose(detachRun());
  emit cleared();
  std::vector<LossPoint> points;
  for (const TrainPoint& p : trainer->history()) points.push_back(lossPointOf(p));
  if (!points.empty()) emit lossPointsAdded(points);
  emit progressed(progressOf(*trainer));
  const bool finished = trainer->finished();
  std::shared_ptr<Run> run = newRun();
  run->trainer = std::move(trainer);
  run->pauseRequested = true;
  launch(std::move(run));
  setState(finished ? State::Finished : State::Paused);
}

void TrainingSession::openModel(std::unique_ptr<Model> model, std::shared_ptr<const Vocabulary> vocabulary,
                                std::vector<int> probe, std::string name) {
  dispose(detachRun());
  emit cleared();
  std::shared_ptr<Run> run = newRun();
  run->openedModel = std::move(model);
  run->openedVocabulary = std::move(vocabulary);
  run->openedProbe = std::move(probe);
  run->openedName = name.empty() ? "opened model" : std::move(name);
  run->pauseRequested = true;
  launch(std::move(run));
  setState(State::Finished);
}

bool TrainingSession::hasOpenedModel() const { return run_ && run_->openedModel; }

std::unique_ptr<Model> TrainingSession::takeOpenedModel() {
  if (!hasOpenedModel()) return nullptr;
  joinWorker(*run_);  // it waits between two probe traces
  std::unique_ptr<Model> model = std::move(run_->openedModel);
  dispose(detachRun());  // what the worker published last is stale now
  setState(State::Idle);
  return model;
}

std::shared_ptr<TrainingSession::Run> TrainingSession::newRun() {
  auto run = std::make_shared<Run>();
  run->id = ++lastRunId_;
  run->gainsRequest = std::exchange(pendingGains_, std::nullopt);  // gains set before the run started
  return run;
}

void TrainingSession::launch(std::shared_ptr<Run> run) {
  dispose(detachRun());  // none, unless a slot of the saves a discard reported launched one
  run_ = std::move(run);
  Run* r = run_.get();  // the session keeps it until the worker is joined (joinWorker() or dispose())
  r->thread = std::thread([this, r] { workerMain(*r); });
}

std::shared_ptr<TrainingSession::Run> TrainingSession::detachRun() {
  std::shared_ptr<Run> run = std::move(run_);
  if (!run) return nullptr;
  run->retired = true;
  // Rare: a save is still being written (or its report is on its way). saved() reports every
  // request, and before cleared(), so this discard waits for the worker.
  if (run->savesAwaited > 0) joinWorker(*run);
  else requestStop(*run);
  std::vector<SaveResult> saves;
  {
    std::lock_guard lock(run->mutex);
    saves.swap(run->mailbox.saves);
    if (run->gainsRequest) pendingGains_ = std::move(run->gainsRequest);
  }
  emitSaves(saves);
  return run;
}

// A discarded model's buffers (hundreds of megabytes for a large preset or an opened model) take
// up to a second to free: the last owner is a pool thread (or the retired worker), never the UI thread.
void TrainingSession::dispose(std::shared_ptr<Run> run) {
  if (!run) return;
  disposal_.start([run = std::move(run)]() mutable {
    if (run->thread.joinable()) run->thread.join();  // the worker ends after its current step
    run->trainer.reset();
    run->openedModel.reset();
    {
      std::lock_guard lock(run->mutex);
      run->mailbox = Mailbox{};  // an undelivered trace holds a copy of the weights
    }
    run.reset();
  });
}

void TrainingSession::continueFor(int moreSteps) {
  if (state_ != State::Finished || !run_ || run_->openedModel || moreSteps <= 0) return;
  joinWorker(*run_);  // the serving worker, between two requests; the trainer is this thread's now
  std::unique_ptr<Trainer> trainer = std::move(run_->trainer);
  dispose(detachRun());
  if (!trainer) return;
  std::shared_ptr<Run> run = newRun();
  run->trainer = std::move(trainer);
  run->continueSteps = moreSteps;  // the worker extends the run: rebuilding its task is engine work
  launch(std::move(run));
  setState(State::Running);
}

void TrainingSession::pause() {
  if (state_ != State::Running || !run_) return;
  {
    std::lock_guard lock(run_->mutex);
    run_->pauseRequested = true;
  }
  setState(State::Paused);
}

void TrainingSession::resume() {
  if (state_ != State::Paused || !run_) return;
  {
    std::lock_guard lock(run_->mutex);
    run_->pauseRequested = false;
  }
  run_->wake.notify_all();
  setState(State::Running);
}

void TrainingSession::step() {
  if (state_ != State::Paused || !run_) return;
  {
    std::lock_guard lock(run_->mutex);
    ++run_->stepsGranted;
  }
  run_->wake.notify_all();
}

void TrainingSession::stop() {
  if (!run_ || !run_->thread.joinable()) return;
  joinWorker(*run_);
  deliver(run_->id);  // what the worker published last, including how it ended
}

void TrainingSession::reset() {
  dispose(detachRun());
  setState(State::Idle);
  emit cleared();
}

void TrainingSession::setProbe(std::vector<int> tokens) {
  if (!tokens.empty()) requestProbe({std::move(tokens)});
}

void TrainingSession::drawProbe() { requestProbe({}); }

void TrainingSession::setHeadGains(std::vector<std::vector<float>> gains) {
  headGains_ = gains;
  if (!run_) {
    pendingGains_ = std::move(gains);
    return;
  }
  {
    std::lock_guard lock(run_->mutex);
    run_->gainsRequest = std::move(gains);
    run_->probeRequested = true;
  }
  run_->wake.notify_all();
}

void TrainingSession::requestProbe(ProbeRequest request) {
  if (!run_) return;
  {
    std::lock_guard lock(run_->mutex);
    run_->probeRequest = std::move(request);
    run_->probeRequested = true;
  }
  run_->wake.notify_all();
}

bool TrainingSession::hasExperiment() const {
  return run_ && !run_->openedModel && (run_->thread.joinable() || run_->trainer != nullptr);
}

void TrainingSession::save(const QString& dir, SaveKind kind) {
  if (run_ && run_->thread.joinable()) {
    std::lock_guard lock(run_->mutex);
    if (!run_->workerDone) {
      run_->saveRequests.push_back({dir.toStdString(), kind});
      ++run_->savesAwaited;
      run_->wake.notify_all();
      return;
    }
  }
  // No worker, or one that has ended: the trainer is the UI thread's once joined. The worker's
  // last mail (how it ended) stays in the mailbox for deliver().
  if (run_) joinWorker(*run_);
  const Trainer* trainer = run_ ? run_->trainer.get() : nullptr;
  SaveResult result{{dir.toStdString(), kind}, 0, {}};
  if (!trainer) {
    result.error = tr("there is no trained or opened experiment to save").toStdString();
  } else {
    result.step = trainer->stepsDone();
    result.error = saveCheckpoint(dir.toStdString(), *trainer);
  }
  emitSaves({result});
}

void TrainingSession::emitSaves(const std::vector<SaveResult>& saves) {
  for (const SaveResult& s : saves) emit saved(QString::fromStdString(s.request.dir), s.step, QString::fromStdString(s.error), s.request.kind);
}

void TrainingSession::deliver(quint64 runId) {
  if (!run_ || run_->id != runId) return;  // a retired run's mail: never shown
  const std::shared_ptr<Run> run = run_;
  run->notificationQueued = false;
  Mailbox mail;
  {
    std::lock_guard lock(run->mutex);
    std::swap(mail, run->mailbox);
  }
  run->savesAwaited -= static_cast<int>(mail.saves.size());
  // A slot may start or reset the session while we emit; then the rest of `mail` is stale.
  if (!mail.points.empty()) emit lossPointsAdded(mail.points);
  if (run != run_) return;
  if (mail.progress) emit progressed(*mail.progress);
  if (run != run_) return;
  if (mail.tracing && !mail.trace) emit tracing(*mail.tracing);
  if (run != run_) return;
  if (mail.trace) emit traced(mail.trace);
  if (run != run_) return;
  emitSaves(mail.saves);
  if (run != run_) return;
  if (mail.pausedAt) {
    if (state_ == State::Running && run->pauseRequested) setState(State::Paused);  // it paused at the requested step
    emit pausedAt(*mail.pausedAt);
    if (run != run_) return;
  }

  if (mail.ended) {
    if (*mail.ended != State::Finished) joinWorker(*run);  // it has ended; a finished worker stays to trace probes and save
    if (*mail.ended == State::Failed) emit failed(QString::fromStdString(mail.error));
    if (run != run_) return;
    setState(*mail.ended);
  }
}

void TrainingSession::requestStop(Run& r) {
  {
    std::lock_guard lock(r.mutex);
    r.stopRequested = true;
  }
  r.wake.notify_all();
  { std::lock_guard lock(turnMutex_); }  // a worker waiting for its turn has seen the flag, or waits now
  turnFree_.notify_all();
}

void TrainingSession::joinWorker(Run& r) {
  if (!r.thread.joinable()) return;
  requestStop(r);
  r.thread.join();
}

void TrainingSession::setState(State state) {
  if (state == state_) return;
  state_ = state;
  emit stateChanged(state);
}

// ---- worker thread ---------------------------------------------------------------------------

void TrainingSession::workerMain(Run& r) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), "attnlab-trainer");
#endif
  runBelowTheUi();
  // A retired worker of this session may still finish its step (and free its model): this one
  // waits for it here, off the UI thread.
  const bool turn = takeTurn(r);
  if (!turn) {
    // Stopped before it began: nothing was computed. A finished opened run stays Finished.
    const bool finished = r.openedModel || (r.trainer && r.continueSteps == 0 && r.trainer->finished());
    finishWorker(r, finished ? std::nullopt : std::optional<State>(State::Stopped));
  } else if (r.openedModel) {
    runOpenedWorker(r);
  } else {
    runWorker(r);
  }
  if (r.retired) {  // no one will save or hand over what it holds: free it before the next run builds its own
    r.trainer.reset();
    r.openedModel.reset();
  }
  if (turn) releaseTurn();
}

bool TrainingSession::takeTurn(Run& r) {
  std::unique_lock lock(turnMutex_);
  turnFree_.wait(lock, [this, &r] { return !turnTaken_ || r.stopRequested; });
  if (r.stopRequested) return false;
  turnTaken_ = true;
  return true;
}

void TrainingSession::releaseTurn() {
  {
    std::lock_guard lock(turnMutex_);
    turnTaken_ = false;
  }
  turnFree_.notify_all();
}

void TrainingSession::runWorker(Run& r) {
  try {
    if (r.config) r.trainer = std::make_unique<Trainer>(*r.config);
    if (const int more = std::exchange(r.continueSteps, 0); more > 0) r.trainer = extendedRun(*r.trainer, more);
    Trainer& trainer = *r.trainer;
    trainer.setDiagnosticsProbe(layerDiagnosticsProbe(trainer));  // measured on this thread at validation steps
    auto vocabulary = std::make_shared<const Vocabulary>(trainer.task().vocabulary());
    auto run = std::make_shared<RunData>();
    run->config = trainer.config();
    run->vocabulary = vocabulary;
    run->sequenceLength = trainer.sequenceLength();
    run->hasAnswers = trainer.task().hasAnswers();
    run->evalBatches = validationBatches(trainer, kSnapshotEvalBatches, kSnapshotEvalSeed);
    if (!r.config) run->qkHistory = trainer.qkHistory().frames();  // an opened checkpoint's spectra past
    WorkerProbe probe{trainer.probeTokens(), Rng(trainer.config().train.seed ^ kProbeDrawStream), vocabulary, run, {}};
    {
      std::lock_guard lock(r.mutex);
      if (r.gainsRequest) probe.headGains = *r.gainsRequest;  // gains set before the run started
    }
    trainUntilDoneOrStopped(r, trainer, probe);
    if (!trainer.finished()) return finishWorker(r, State::Stopped);
    publishEnd(r, State::Finished);
    serveUntilStopped(r, trainer, probe);
    finishWorker(r, std::nullopt);  // Finished was announced already
  } catch (const DivergenceError& e) {
    finishWorker(r, State::Failed, tr("Training diverged: %1").arg(QString::fromStdString(e.what())));
  } catch (const ConfigError& e) {
    finishWorker(r, State::Failed, tr("Invalid configuration: %1").arg(QString::fromStdString(e.what())));
  } catch (const std::exception& e) {
    finishWorker(r, State::Failed, tr("Training failed: %1").arg(QString::fromStdString(e.what())));
  } catch (...) {
    finishWorker(r, State::Failed, tr("Training failed with an unknown error"));
  }
}

void TrainingSession::trainUntilDoneOrStopped(Run& r, Trainer& trainer, WorkerProbe& probe) {
  const TrainConfig& train = trainer.config().train;
  auto traceBegan = Clock::now();
  publishTrace(r, trainer, probe);
  auto lastTrace = Clock::now();
  auto traceGap = std::max<Clock::duration>(kTraceInterval, kTrainingPerTraceTime * (lastTrace - traceBegan));

  ProgressSnapshot progress = progressOf(trainer);
  StepTimer stepTimer;  // wall time per step over the recent steps, validation and traces included
  bool firstTimedStep = true;
  bool pauseAnnounced = false;  // a save or probe while paused wakes the worker without ending the pause
  while (!trainer.finished() && !r.stopRequested) {
    serveRequests(r, trainer, probe);
    const int pauseAt = pauseAtStep_;
    if (pauseAt > 0 && trainer.stepsDone() >= pauseAt) {
      std::lock_guard lock(r.mutex);
      if (!r.stopRequested) {  // a discarded run leaves the pause-at step to the next one
        int expected = pauseAt;
        pauseAtStep_.compare_exchange_strong(expected, 0);
        r.pauseRequested = true;
      }
    }
    const bool singleStep = r.pauseRequested && takeGrantedStep(r);
    if (r.pauseRequested && !singleStep) {
      if (probe.tracedStep != trainer.stepsDone()) publishTrace(r, trainer, probe);  // the map of the step we stopped at
      if (!pauseAnnounced) publishPause(r, trainer.stepsDone());
      pauseAnnounced = true;
      if (!waitWhilePaused(r)) break;
      continue;
    }
    pauseAnnounced = false;

    const auto began = Clock::now();
    const TrainPoint step = trainer.trainStep();
    if (r.retired) break;  // discarded during the step: no one reads what it would publish
    // The trainer validates every train.eval_every steps and at the end; NaN on other steps.
    const LossPoint point = lossPointOf(step);
    if (!std::isnan(step.val_loss)) {
      progress.val_loss = step.val_loss;
      progress.accuracy = step.accuracy;
    }
    if (singleStep || trainer.finished() || Clock::now() - lastTrace >= traceGap) {
      traceBegan = Clock::now();
      publishTrace(r, trainer, probe);
      lastTrace = Clock::now();
      traceGap = std::max<Clock::duration>(kTraceInterval, kTrainingPerTraceTime * (lastTrace - traceBegan));
    }

    const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
    stepTimer.add(seconds);
    progress.tokens_per_second = smooth(progress.tokens_per_second, step.tokens_per_second, firstTimedStep);
    firstTimedStep = false;
    progress.step = step.step;
    progress.loss = step.loss;
    progress.lr = step.lr;
    progress.steps_per_second = stepTimer.settled() ? 1.0 / std::max(stepTimer.secondsPerStep(), 1e-9) : kNotMeasured;
    progress.seconds_left = stepTimer.secondsLeft(train.steps - step.step);
    addQkGuardNote(step, train.qk_guard, progress.qk_guard);
    publishStep(r, point, progress);
  }
}

namespace {

// An opened model has no task: its analyses' sample is its first probe (one sequence, each token
// predicting the next); the head table reads each later probe from the trace.
std::shared_ptr<const RunData> openedRunData(const Model& model, const std::shared_ptr<const Vocabulary>& vocabulary,
                                             const std::vector<int>& probe, const std::string& name) {
  auto run = std::make_shared<RunData>();
  run->config.model = model.config();
  run->config.name = name;
  run->openedName = name;
  run->vocabulary = vocabulary;
  run->sequenceLength = static_cast<int>(probe.size());
  Batch sample{1, static_cast<int>(probe.size()), probe, {}};
  sample.targets.assign(probe.begin() + 1, probe.end());
  sample.targets.push_back(-1);
  if (sample.T >= 2) run->evalBatches.push_back(std::move(sample));
  return run;
}

}  // namespace

// A fresh probe draw keeps the current probe.
void TrainingSession::runOpenedWorker(Run& r) {
  try {
    const Model& model = *r.openedModel;
    WorkerProbe probe{r.openedProbe, Rng(1), r.openedVocabulary,
                      openedRunData(model, r.openedVocabulary, r.openedProbe, r.openedName), {}};
    {
      std::lock_guard lock(r.mutex);
      if (r.gainsRequest) probe.headGains = *r.gainsRequest;
    }
    publishTrace(r, model, 0, probe);
    publishEnd(r, State::Finished);
    const auto keep = [&probe](Rng&) { return probe.tokens; };
    for (;;) {
      {
        std::unique_lock lock(r.mutex);
        r.wake.wait(lock, [&r] { return r.stopRequested || r.probeRequested || !r.saveRequests.empty(); });
        if (r.stopRequested) break;
      }
      saveRequested(r, nullptr);
      if (takeProbeRequest(r, model.config(), keep, probe)) {
        {
          std::lock_guard lock(r.mutex);
          r.mailbox.tracing = static_cast<int>(probe.tokens.size());
        }
        notifyUi(r);
        publishTrace(r, model, 0, probe);
      }
    }
    finishWorker(r, std::nullopt);
  } catch (const std::exception& e) {
    finishWorker(r, State::Failed, tr("Tracing the opened model failed: %1").arg(QString::fromStdString(e.what())));
  }
}

void TrainingSession::serveUntilStopped(Run& r, const Trainer& trainer, WorkerProbe& probe) {
  for (;;) {
    {
      std::unique_lock lock(r.mutex);
      r.wake.wait(lock, [&r] { return r.stopRequested || r.probeRequested || !r.saveRequests.empty(); });
      if (r.stopRequested) return;
    }
    serveRequests(r, trainer, probe);
  }
}

void TrainingSession::serveRequests(Run& r, const Trainer& trainer, WorkerProbe& probe) {
  saveRequested(r, &trainer);
  if (takeProbeRequest(r, trainer, probe)) publishTrace(r, trainer, probe);
}

void TrainingSession::saveRequested(Run& r, const Trainer* trainer) {
  std::vector<SaveRequest> requests;
  {
    std::lock_guard lock(r.mutex);
    requests.swap(r.saveRequests);
  }
  if (requests.empty()) return;
  std::vector<SaveResult> results;
  for (const SaveRequest& request : requests) {
    SaveResult result{request, trainer ? trainer->stepsDone() : 0, {}};
    result.error = trainer         ? saveCheckpoint(request.dir, *trainer)
                   : r.openedModel ? tr("an opened model is not saved as an experiment (attnlab-cli export-hf writes its folder)").toStdString()
                                   : tr("the experiment could not be built, so there is nothing to save").toStdString();
    results.push_back(std::move(result));
  }
  {
    std::lock_guard lock(r.mutex);
    for (SaveResult& result : results) r.mailbox.saves.push_back(std::move(result));
  }
  notifyUi(r);
}

bool TrainingSession::takeGrantedStep(Run& r) {
  std::lock_guard lock(r.mutex);
  if (r.stepsGranted == 0) return false;
  --r.stepsGranted;
  return true;
}

bool TrainingSession::takeProbeRequest(Run& r, const Trainer& trainer, WorkerProbe& probe) {
  const int context = trainer.config().model.context;
  return takeProbeRequest(r, trainer.config().model, [&trainer, context](Rng& draws) {
    return trainer.task().probe(trainer.task().sequenceLength(context), draws);
  }, probe);
}

bool TrainingSession::takeProbeRequest(Run& r, const ModelConfig& shape, const std::function<std::vector<int>(Rng&)>& draw,
                                       WorkerProbe& probe) {
  if (!r.probeRequested) return false;
  std::optional<ProbeRequest> request;
  std::optional<HeadGains> gains;
  {
    std::lock_guard lock(r.mutex);
    std::swap(request, r.probeRequest);
    std::swap(gains, r.gainsRequest);
    r.probeRequested = false;
  }
  const auto fits = [&shape](const std::vector<std::vector<float>>& g) {
    if (g.empty()) return true;
    if (static_cast<int>(g.size()) != shape.n_layers) return false;
    return std::all_of(g.begin(), g.end(), [&shape](const std::vector<float>& layer) { return static_cast<int>(layer.size()) == shape.n_heads; });
  };
  const bool gainsChanged = gains && fits(*gains) && *gains != probe.headGains;
  if (gainsChanged) {
    probe.headGains = std::move(*gains);
    probe.tracedStep = -1;
  }
  if (!request) return gainsChanged;
  if (request->tokens.empty()) {
    probe.tokens = draw(probe.draws);
  } else {
    // The UI encoded with this run's vocabulary; ids from an older run are refused, not traced.
    const int vocab = probe.vocabulary->size();
    for (int id : request->tokens)
      if (id < 0 || id >= vocab || id >= shape.vocab) return gainsChanged;
    probe.tokens = std::move(request->tokens);
    if (static_cast<int>(probe.tokens.size()) > shape.context) probe.tokens.resize(shape.context);
  }
  probe.tracedStep = -1;
  return true;
}

void TrainingSession::finishWorker(Run& r, std::optional<State> how, const QString& error) {
  {
    std::lock_guard lock(r.mutex);
    r.workerDone = true;  // from here on save() writes on the UI thread, after joining
  }
  saveRequested(r, r.trainer.get());  // requests that arrived before that, e.g. during the last step
  if (how) publishEnd(r, *how, error);
}

bool TrainingSession::waitWhilePaused(Run& r) {
  std::unique_lock lock(r.mutex);
  r.wake.wait(lock, [&r] {
    return !r.pauseRequested || r.stopRequested || r.stepsGranted > 0 || !r.saveRequests.empty() || r.probeRequested;
  });
  return !r.stopRequested;
}

void TrainingSession::publishTrace(Run& r, const Trainer& trainer, WorkerProbe& probe) {
  publishTrace(r, trainer.model(), trainer.stepsDone(), probe);
}

void TrainingSession::publishTrace(Run& r, const Model& source, int step, WorkerProbe& probe) {
  // The trace comes from a copy of the weights, which the views keep as the model snapshot.
  std::shared_ptr<Model> copy = copyModel(source);
  if (!probe.headGains.empty()) copy->setHeadGains(probe.headGains);
  auto model = std::make_shared<ModelSnapshot>();
  model->step = step;
  model->run = probe.run;
  model->headGains = probe.headGains;
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->step = step;
  snapshot->trace = traceModel(*copy, *probe.vocabulary, probe.tokens);
  model->model = std::move(copy);
  snapshot->model = std::move(model);
  snapshot->vocabulary = probe.vocabulary;
  snapshot->maxProbeLength = source.config().context;
  probe.tracedStep = snapshot->step;
  {
    std::lock_guard lock(r.mutex);
    r.mailbox.trace = std::move(snapshot);
    r.mailbox.tracing.reset();
  }
  notifyUi(r);
}

void TrainingSession::publishStep(Run& r, const LossPoint& point, const ProgressSnapshot& progress) {
  {
    std::lock_guard lock(r.mutex);
    r.mailbox.points.push_back(point);
    r.mailbox.progress = progress;
  }
  notifyUi(r);
}

void TrainingSession::publishPause(Run& r, int step) {
  {
    std::lock_guard lock(r.mutex);
    r.mailbox.pausedAt = step;
  }
  notifyUi(r);
}

void TrainingSession::publishEnd(Run& r, State how, const QString& error) {
  {
    std::lock_guard lock(r.mutex);
    r.mailbox.ended = how;
    r.mailbox.error = error.toStdString();
  }
  notifyUi(r);
}

void TrainingSession::notifyUi(Run& r) {
  if (r.retired) return;  // its mail is never delivered
  if (!r.notificationQueued.exchange(true))
    postQueued(this, [this, id = r.id] { deliver(id); });
}

}  // namespace attnlab
