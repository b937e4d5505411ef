#include "training_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "train/trainer.h"

#ifdef __linux__
#include <sys/resource.h>

#include <cerrno>
#include <unistd.h>
#endif

namespace attnlab {

namespace {

using Clock = std::chrono::steady_clock;
// At most ~10 probe traces per second: enough for a live heatmap, cheap beside training.
constexpr auto kTraceInterval = std::chrono::milliseconds(100);
// Weight of the newest step in the smoothed rates (an exponential moving average).
constexpr double kRateSmoothing = 0.1;
// Training threads run this much nicer than the UI thread, so painting and input never wait for
// a core while training keeps every core busy (the OpenMP threads the worker starts inherit it).
constexpr int kWorkerNicenessAboveUi = 10;

void yieldToTheUi() {
#ifdef __linux__
  const auto self = static_cast<id_t>(gettid());
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, self);  // the UI thread's niceness, inherited
  if (errno == 0) setpriority(PRIO_PROCESS, self, std::min(19, now + kWorkerNicenessAboveUi));
#endif
}

// Stream of the "draw a fresh example" probes, apart from the trainer's fixed probe.
constexpr uint64_t kProbeDrawStream = 0x5bd1e9955bd1e995ull;

double smooth(double average, double sample, bool first) {
  return first ? sample : average + kRateSmoothing * (sample - average);
}

}  // namespace

struct TrainingSession::WorkerProbe {
  std::vector<int> tokens;
  Rng draws;
  std::shared_ptr<const Vocabulary> vocabulary;
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
  joinWorker();
  {
    std::lock_guard lock(mutex_);
    mailbox_ = Mailbox{};
    pauseRequested_ = false;
    stopRequested_ = false;
    probeRequest_.reset();
    probeRequested_ = false;
  }
  notificationQueued_ = false;
  ++run_;
  emit cleared();
  worker_ = QThread::create([this, config] { runWorker(config); });
  worker_->setObjectName(QStringLiteral("attnlab-trainer"));
  worker_->start();
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

void TrainingSession::stop() {
  if (!worker_) return;
  joinWorker();
  deliver();  // what the worker published last, including how it ended
}

void TrainingSession::reset() {
  joinWorker();
  {
    std::lock_guard lock(mutex_);
    mailbox_ = Mailbox{};
  }
  ++run_;
  setState(State::Idle);
  emit cleared();
}

void TrainingSession::setProbe(std::vector<int> tokens) {
  if (!tokens.empty()) requestProbe({std::move(tokens)});
}

void TrainingSession::drawProbe() { requestProbe({}); }

void TrainingSession::requestProbe(ProbeRequest request) {
  {
    std::lock_guard lock(mutex_);
    probeRequest_ = std::move(request);
    probeRequested_ = true;
  }
  wake_.notify_all();
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
  if (mail.trace) emit traced(mail.trace);
  if (run != run_) return;
  if (mail.pausedAt) {
    if (state_ == State::Running && pauseRequested_) setState(State::Paused);  // it paused at the requested step
    emit pausedAt(*mail.pausedAt);
    if (run != run_) return;
  }

  if (mail.ended) {
    if (*mail.ended != State::Finished) joinWorker();  // a finished worker stays to trace probes
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

void TrainingSession::runWorker(ExperimentConfig config) {
  yieldToTheUi();
  try {
    Trainer trainer(config);
    trainUntilDoneOrStopped(trainer);
  } catch (const DivergenceError& e) {
    publishEnd(State::Failed, tr("Training diverged: %1").arg(QString::fromStdString(e.what())));
  } catch (const ConfigError& e) {
    publishEnd(State::Failed, tr("Invalid configuration: %1").arg(QString::fromStdString(e.what())));
  } catch (const std::exception& e) {
    publishEnd(State::Failed, tr("Training failed: %1").arg(QString::fromStdString(e.what())));
  } catch (...) {
    publishEnd(State::Failed, tr("Training failed with an unknown error"));
  }
}

void TrainingSession::trainUntilDoneOrStopped(Trainer& trainer) {
  const TrainConfig& train = trainer.config().train;
  WorkerProbe probe{trainer.probeTokens(), Rng(train.seed ^ kProbeDrawStream),
                    std::make_shared<const Vocabulary>(trainer.task().vocabulary())};
  publishTrace(trainer, probe);
  auto lastTrace = Clock::now();
  bool pauseAnnounced = false;

  ProgressSnapshot progress;
  progress.total_steps = train.steps;
  double stepSeconds = 0;  // smoothed wall time per step, validation and traces included
  bool firstTimedStep = true;
  while (!trainer.finished() && !stopRequested_) {
    if (takeProbeRequest(trainer, probe)) publishTrace(trainer, probe);
    const int pauseAt = pauseAtStep_;
    if (pauseAt > 0 && trainer.stepsDone() >= pauseAt) {
      pauseAtStep_ = 0;
      pauseRequested_ = true;
    }
    if (pauseRequested_) {
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
    const LossPoint point{step.step,     step.loss,      step.val_loss,          step.accuracy,
                          step.lr,       step.grad_norm, step.layer_grad_norm,   step.layer_entropy};
    if (!std::isnan(step.val_loss)) {
      progress.val_loss = step.val_loss;
      progress.accuracy = step.accuracy;
    }
    if (trainer.finished() || Clock::now() - lastTrace >= kTraceInterval) {
      publishTrace(trainer, probe);
      lastTrace = Clock::now();
    }

    const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
    stepSeconds = smooth(stepSeconds, seconds, firstTimedStep);
    progress.tokens_per_second = smooth(progress.tokens_per_second, step.tokens_per_second, firstTimedStep);
    firstTimedStep = false;
    progress.step = step.step;
    progress.loss = step.loss;
    progress.lr = step.lr;
    progress.steps_per_second = 1.0 / std::max(stepSeconds, 1e-9);
    progress.seconds_left = (train.steps - step.step) * stepSeconds;
    publishStep(point, progress);
  }
  if (!trainer.finished() || stopRequested_) {
    publishEnd(State::Stopped);
    return;
  }
  publishEnd(State::Finished);
  serveProbesUntilStopped(trainer, probe);
}

void TrainingSession::serveProbesUntilStopped(const Trainer& trainer, WorkerProbe& probe) {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopRequested_ || probeRequested_; });
      if (stopRequested_) return;
    }
    if (takeProbeRequest(trainer, probe)) publishTrace(trainer, probe);
  }
}

bool TrainingSession::takeProbeRequest(const Trainer& trainer, WorkerProbe& probe) {
  if (!probeRequested_) return false;
  std::optional<ProbeRequest> request;
  {
    std::lock_guard lock(mutex_);
    std::swap(request, probeRequest_);
    probeRequested_ = false;
  }
  if (!request) return false;
  const ExperimentConfig& config = trainer.config();
  if (request->tokens.empty()) {
    probe.tokens = trainer.task().probe(trainer.task().sequenceLength(config.model.context), probe.draws);
  } else {
    // The UI encoded with this run's vocabulary; ids from an older run are refused, not traced.
    const int vocab = probe.vocabulary->size();
    for (int id : request->tokens)
      if (id < 0 || id >= vocab) return false;
    probe.tokens = std::move(request->tokens);
    if (static_cast<int>(probe.tokens.size()) > config.model.context) probe.tokens.resize(config.model.context);
  }
  probe.tracedStep = -1;
  return true;
}

bool TrainingSession::waitWhilePaused() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return !pauseRequested_ || stopRequested_ || probeRequested_; });
  return !stopRequested_;
}

void TrainingSession::publishTrace(const Trainer& trainer, WorkerProbe& probe) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->step = trainer.stepsDone();
  snapshot->trace = trainer.trace(probe.tokens);
  snapshot->vocabulary = probe.vocabulary;
  snapshot->maxProbeLength = trainer.config().model.context;
  probe.tracedStep = snapshot->step;
  {
    std::lock_guard lock(mutex_);
    mailbox_.trace = std::move(snapshot);
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
