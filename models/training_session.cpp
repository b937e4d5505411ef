#include "training_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <utility>

#include "analysis/analysis.h"
#include "analysis/layer_diagnostics_probe.h"
#include "io/checkpoint.h"
#include "step_timer.h"
#include "train/qk_guard.h"
#include "train/trainer.h"

#include "worker_priority.h"

namespace attnlab {

namespace {
// A discarded model's buffers (hundreds of megabytes for a large preset or an opened model) take
// up to a second to free: the last owner is a pool thread, never the UI thread.
template <typename T>
void disposeOn(QThreadPool& pool, std::unique_ptr<T> doomed) {
  if (!doomed) return;
  pool.start([owner = std::shared_ptr<T>(std::move(doomed))]() mutable { owner.reset(); });
}

using Clock = std::chrono::steady_clock;
// At most ~10 probe traces per second: enough for a live heatmap, cheap beside training.
constexpr auto kTraceInterval = std::chrono::milliseconds(100);
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

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) {}

TrainingSession::~TrainingSession() { joinWorker(); }

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
  discardRun();
  disposeOn(disposal_, std::move(trainer_));
  ++run_;
  emit cleared();
  launch(config);
  setState(State::Running);
}

void TrainingSession::open(std::unique_ptr<Trainer> trainer) {
  discardRun();
  disposeOn(disposal_, std::move(trainer_));
  trainer_ = std::move(trainer);
  ++run_;
  emit cleared();
  std::vector<LossPoint> points;
  for (const TrainPoint& p : trainer_->history()) points.push_back(lossPointOf(p));
  if (!points.empty()) emit lossPointsAdded(points);
  emit progressed(progressOf(*trainer_));
  const bool finished = trainer_->finished();
  pauseRequested_ = true;
  launch(std::nullopt);
  setState(finished ? State::Finished : State::Paused);
}

void TrainingSession::openModel(std::unique_ptr<Model> model, std::shared_ptr<const Vocabulary> vocabulary,
                                std::vector<int> probe, std::string name) {
  discardRun();
  disposeOn(disposal_, std::move(trainer_));
  openedModel_ = std::move(model);
  openedVocabulary_ = std::move(vocabulary);
  openedProbe_ = std::move(probe);
  openedName_ = name.empty() ? "opened model" : std::move(name);
  ++run_;
  emit cleared();
  pauseRequested_ = true;
  launch(std::nullopt);
  setState(State::Finished);
}

std::unique_ptr<Model> TrainingSession::takeOpenedModel() {
  if (!openedModel_) return nullptr;
  joinWorker();
  std::unique_ptr<Model> model = std::move(openedModel_);
  openedVocabulary_.reset();
  ++run_;  // what the worker published last is stale now
  setState(State::Idle);
  return model;
}

void TrainingSession::launch(std::optional<ExperimentConfig> config) {
  {
    std::lock_guard lock(mutex_);
    mailbox_ = Mailbox{};
    stopRequested_ = false;
    if (config) pauseRequested_ = false;
    stepsGranted_ = 0;
    workerDone_ = false;
    probeRequest_.reset();
    probeRequested_ = false;
  }
  notificationQueued_ = false;
  worker_ = QThread::create([this, config] { openedModel_ ? runOpenedWorker() : runWorker(config); });
  worker_->setObjectName(QStringLiteral("attnlab-trainer"));
  worker_->start();
}

void TrainingSession::continueFor(int moreSteps) {
  if (state_ != State::Finished || openedModel_ || moreSteps <= 0) return;
  discardRun();  // joins the serving worker; the trainer is this thread's until the next launch
  if (!trainer_) return;
  continueSteps_ = moreSteps;  // the worker extends the run: rebuilding its task is engine work
  pauseRequested_ = false;
  launch(std::nullopt);
  setState(State::Running);
}

void TrainingSession::pause() {
  if (state_ != State::Running) return;
  {
    std::lock_guard lock(mutex_);
    pauseRequested_ = true;
  }
  setState(State::Paused);
}

void TrainingSession::resume() {
  if (state_ != State::Paused) return;
  {
    std::lock_guard lock(mutex_);
    pauseRequested_ = false;
  }
  wake_.notify_all();
  setState(State::Running);
}

void TrainingSession::step() {
  if (state_ != State::Paused) return;
  {
    std::lock_guard lock(mutex_);
    ++stepsGranted_;
  }
  wake_.notify_all();
}

void TrainingSession::stop() {
  if (!worker_) return;
  joinWorker();
  deliver();  // what the worker published last, including how it ended
}

void TrainingSession::reset() {
  discardRun();
  disposeOn(disposal_, std::move(trainer_));
  ++run_;
  setState(State::Idle);
  emit cleared();
}

void TrainingSession::setProbe(std::vector<int> tokens) {
  if (!tokens.empty()) requestProbe({std::move(tokens)});
}

void TrainingSession::drawProbe() { requestProbe({}); }

void TrainingSession::setHeadGains(std::vector<std::vector<float>> gains) {
  headGains_ = gains;
  {
    std::lock_guard lock(mutex_);
    gainsRequest_ = std::move(gains);
    probeRequested_ = true;
  }
  wake_.notify_all();
}

void TrainingSession::requestProbe(ProbeRequest request) {
  {
    std::lock_guard lock(mutex_);
    probeRequest_ = std::move(request);
    probeRequested_ = true;
  }
  wake_.notify_all();
}

bool TrainingSession::hasExperiment() const { return !openedModel_ && (worker_ != nullptr || trainer_ != nullptr); }

void TrainingSession::save(const QString& dir, SaveKind kind) {
  if (worker_) {
    std::lock_guard lock(mutex_);
    if (!workerDone_) {
      saveRequests_.push_back({dir, kind});
      wake_.notify_all();
      return;
    }
  }
  // No worker, or one that has ended: the trainer is the UI thread's once joined. The worker's
  // last mail (how it ended) stays in the mailbox for deliver().
  joinWorker();
  SaveResult result{{dir, kind}, 0, {}};
  if (!trainer_) {
    result.error = tr("there is no trained or opened experiment to save");
  } else {
    result.step = trainer_->stepsDone();
    result.error = QString::fromStdString(saveCheckpoint(dir.toStdString(), *trainer_));
  }
  emitSaves({result});
}

void TrainingSession::discardRun() {
  joinWorker();
  disposeOn(disposal_, std::move(openedModel_));
  openedVocabulary_.reset();
  std::vector<SaveResult> saves;
  {
    std::lock_guard lock(mutex_);
    saves.swap(mailbox_.saves);
    mailbox_ = Mailbox{};
  }
  emitSaves(saves);
}

void TrainingSession::emitSaves(const std::vector<SaveResult>& saves) {
  for (const SaveResult& s : saves) emit saved(s.request.dir, s.step, s.error, s.request.kind);
}

void TrainingSession::deliver() {
  notificationQueued_ = false;
  Mailbox mail;
  {
    std::lock_guard lock(mutex_);
    std::swap(mail, mailbox_);
  }
  // A slot may start or reset the session while we emit; then the rest of `mail` is stale.
  const quint64 run = run_;
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
    if (state_ == State::Running && pauseRequested_) setState(State::Paused);  // it paused at the requested step
    emit pausedAt(*mail.pausedAt);
    if (run != run_) return;
  }

  if (mail.ended) {
    if (*mail.ended != State::Finished) joinWorker();  // a finished worker stays to trace probes and save
    if (*mail.ended == State::Failed) emit failed(mail.error);
    if (run != run_) return;
    setState(*mail.ended);
  }
}

void TrainingSession::joinWorker() {
  if (!worker_) return;
  {
    std::lock_guard lock(mutex_);
    stopRequested_ = true;
  }
  wake_.notify_all();
  worker_->wait();
  delete worker_;
  worker_ = nullptr;
}

void TrainingSession::setState(State state) {
  if (state == state_) return;
  state_ = state;
  emit stateChanged(state);
}

// ---- worker thread ---------------------------------------------------------------------------

void TrainingSession::runWorker(std::optional<ExperimentConfig> config) {
  runBelowTheUi();
  try {
    if (config) trainer_ = std::make_unique<Trainer>(*config);
    if (const int more = std::exchange(continueSteps_, 0); more > 0) trainer_ = extendedRun(*trainer_, more);
    trainer_->setDiagnosticsProbe(layerDiagnosticsProbe(*trainer_));  // measured on this thread at validation steps
    auto vocabulary = std::make_shared<const Vocabulary>(trainer_->task().vocabulary());
    auto run = std::make_shared<RunData>();
    run->config = trainer_->config();
    run->vocabulary = vocabulary;
    run->sequenceLength = trainer_->sequenceLength();
    run->hasAnswers = trainer_->task().hasAnswers();
    run->evalBatches = validationBatches(*trainer_, kSnapshotEvalBatches, kSnapshotEvalSeed);
    if (!config) run->qkHistory = trainer_->qkHistory().frames();  // an opened checkpoint's spectra past
    WorkerProbe probe{trainer_->probeTokens(), Rng(trainer_->config().train.seed ^ kProbeDrawStream), vocabulary, run, {}};
    {
      std::lock_guard lock(mutex_);
      if (gainsRequest_) probe.headGains = *gainsRequest_;  // gains set before the run started
    }
    trainUntilDoneOrStopped(*trainer_, probe);
    if (!trainer_->finished()) return finishWorker(State::Stopped);
    publishEnd(State::Finished);
    serveUntilStopped(*trainer_, probe);
    finishWorker(std::nullopt);  // Finished was announced already
  } catch (const DivergenceError& e) {
    finishWorker(State::Failed, tr("Training diverged: %1").arg(QString::fromStdString(e.what())));
  } catch (const ConfigError& e) {
    finishWorker(State::Failed, tr("Invalid configuration: %1").arg(QString::fromStdString(e.what())));
  } catch (const std::exception& e) {
    finishWorker(State::Failed, tr("Training failed: %1").arg(QString::fromStdString(e.what())));
  } catch (...) {
    finishWorker(State::Failed, tr("Training failed with an unknown error"));
  }
}

void TrainingSession::trainUntilDoneOrStopped(Trainer& trainer, WorkerProbe& probe) {
  const TrainConfig& train = trainer.config().train;
  publishTrace(trainer, probe);
  auto lastTrace = Clock::now();

  ProgressSnapshot progress = progressOf(trainer);
  StepTimer stepTimer;  // wall time per step over the recent steps, validation and traces included
  bool firstTimedStep = true;
  bool pauseAnnounced = false;  // a save or probe while paused wakes the worker without ending the pause
  while (!trainer.finished() && !stopRequested_) {
    serveRequests(trainer, probe);
    const int pauseAt = pauseAtStep_;
    if (pauseAt > 0 && trainer.stepsDone() >= pauseAt) {
      pauseAtStep_ = 0;
      pauseRequested_ = true;
    }
    const bool singleStep = pauseRequested_ && takeGrantedStep();
    if (pauseRequested_ && !singleStep) {
      if (probe.tracedStep != trainer.stepsDone()) publishTrace(trainer, probe);  // the map of the step we stopped at
      if (!pauseAnnounced) publishPause(trainer.stepsDone());
      pauseAnnounced = true;
      if (!waitWhilePaused()) break;
      continue;
    }
    pauseAnnounced = false;

    const auto began = Clock::now();
    const TrainPoint step = trainer.trainStep();
    // The trainer validates every train.eval_every steps and at the end; NaN on other steps.
    const LossPoint point = lossPointOf(step);
    if (!std::isnan(step.val_loss)) {
      progress.val_loss = step.val_loss;
      progress.accuracy = step.accuracy;
    }
    if (singleStep || trainer.finished() || Clock::now() - lastTrace >= kTraceInterval) {
      publishTrace(trainer, probe);
      lastTrace = Clock::now();
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
    publishStep(point, progress);
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
void TrainingSession::runOpenedWorker() {
  runBelowTheUi();
  try {
    const Model& model = *openedModel_;
    WorkerProbe probe{openedProbe_, Rng(1), openedVocabulary_, openedRunData(model, openedVocabulary_, openedProbe_, openedName_), {}};
    {
      std::lock_guard lock(mutex_);
      if (gainsRequest_) probe.headGains = *gainsRequest_;
    }
    publishTrace(model, 0, probe);
    publishEnd(State::Finished);
    const auto keep = [&probe](Rng&) { return probe.tokens; };
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopRequested_ || probeRequested_ || !saveRequests_.empty(); });
        if (stopRequested_) break;
      }
      saveRequested(nullptr);
      if (takeProbeRequest(model.config(), keep, probe)) {
        {
          std::lock_guard lock(mutex_);
          mailbox_.tracing = static_cast<int>(probe.tokens.size());
        }
        notifyUi();
        publishTrace(model, 0, probe);
      }
    }
    finishWorker(std::nullopt);
  } catch (const std::exception& e) {
    finishWorker(State::Failed, tr("Tracing the opened model failed: %1").arg(QString::fromStdString(e.what())));
  }
}

void TrainingSession::serveUntilStopped(const Trainer& trainer, WorkerProbe& probe) {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopRequested_ || probeRequested_ || !saveRequests_.empty(); });
      if (stopRequested_) return;
    }
    serveRequests(trainer, probe);
  }
}

void TrainingSession::serveRequests(const Trainer& trainer, WorkerProbe& probe) {
  saveRequested(&trainer);
  if (takeProbeRequest(trainer, probe)) publishTrace(trainer, probe);
}

void TrainingSession::saveRequested(const Trainer* trainer) {
  std::vector<SaveRequest> requests;
  {
    std::lock_guard lock(mutex_);
    requests.swap(saveRequests_);
  }
  if (requests.empty()) return;
  std::vector<SaveResult> results;
  for (const SaveRequest& request : requests) {
    SaveResult result{request, trainer ? trainer->stepsDone() : 0, {}};
    result.error = trainer        ? QString::fromStdString(saveCheckpoint(request.dir.toStdString(), *trainer))
                   : openedModel_ ? tr("an opened model is not saved as an experiment (attnlab-cli export-hf writes its folder)")
                                  : tr("the experiment could not be built, so there is nothing to save");
    results.push_back(std::move(result));
  }
  {
    std::lock_guard lock(mutex_);
    for (SaveResult& r : results) mailbox_.saves.push_back(std::move(r));
  }
  notifyUi();
}

bool TrainingSession::takeGrantedStep() {
  std::lock_guard lock(mutex_);
  if (stepsGranted_ == 0) return false;
  --stepsGranted_;
  return true;
}

bool TrainingSession::takeProbeRequest(const Trainer& trainer, WorkerProbe& probe) {
  const int context = trainer.config().model.context;
  return takeProbeRequest(trainer.config().model, [&trainer, context](Rng& draws) {
    return trainer.task().probe(trainer.task().sequenceLength(context), draws);
  }, probe);
}

bool TrainingSession::takeProbeRequest(const ModelConfig& shape, const std::function<std::vector<int>(Rng&)>& draw,
                                       WorkerProbe& probe) {
  if (!probeRequested_) return false;
  std::optional<ProbeRequest> request;
  std::optional<std::vector<std::vector<float>>> gains;
  {
    std::lock_guard lock(mutex_);
    std::swap(request, probeRequest_);
    std::swap(gains, gainsRequest_);
    probeRequested_ = false;
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

void TrainingSession::finishWorker(std::optional<State> how, const QString& error) {
  {
    std::lock_guard lock(mutex_);
    workerDone_ = true;  // from here on save() writes on the UI thread, after joining
  }
  saveRequested(trainer_.get());  // requests that arrived before that, e.g. during the last step
  if (how) publishEnd(*how, error);
}

bool TrainingSession::waitWhilePaused() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] {
    return !pauseRequested_ || stopRequested_ || stepsGranted_ > 0 || !saveRequests_.empty() || probeRequested_;
  });
  return !stopRequested_;
}

void TrainingSession::publishTrace(const Trainer& trainer, WorkerProbe& probe) {
  publishTrace(trainer.model(), trainer.stepsDone(), probe);
}

void TrainingSession::publishTrace(const Model& source, int step, WorkerProbe& probe) {
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
    std::lock_guard lock(mutex_);
    mailbox_.trace = std::move(snapshot);
    mailbox_.tracing.reset();
  }
  notifyUi();
}

void TrainingSession::publishStep(const LossPoint& point, const ProgressSnapshot& progress) {
  {
    std::lock_guard lock(mutex_);
    mailbox_.points.push_back(point);
    mailbox_.progress = progress;
  }
  notifyUi();
}

void TrainingSession::publishPause(int step) {
  {
    std::lock_guard lock(mutex_);
    mailbox_.pausedAt = step;
  }
  notifyUi();
}

void TrainingSession::publishEnd(State how, const QString& error) {
  {
    std::lock_guard lock(mutex_);
    mailbox_.ended = how;
    mailbox_.error = error;
  }
  notifyUi();
}

void TrainingSession::notifyUi() {
  if (!notificationQueued_.exchange(true)) QMetaObject::invokeMethod(this, &TrainingSession::deliver, Qt::QueuedConnection);
}

}  // namespace attnlab
