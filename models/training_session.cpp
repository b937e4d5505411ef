#include "training_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "train/trainer.h"

namespace attnlab {

namespace {

using Clock = std::chrono::steady_clock;
// At most ~10 probe traces per second: enough for a live heatmap, cheap beside training.
constexpr auto kTraceInterval = std::chrono::milliseconds(100);
// Weight of the newest step in the smoothed rates (an exponential moving average).
constexpr double kRateSmoothing = 0.1;

double smooth(double average, double sample, bool first) {
  return first ? sample : average + kRateSmoothing * (sample - average);
}

}  // namespace

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
    joinWorker();
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
  const std::vector<int> probe = trainer.probeTokens();
  publishTrace(trainer, probe);
  int tracedStep = trainer.stepsDone();
  auto lastTrace = Clock::now();

  ProgressSnapshot progress;
  progress.total_steps = train.steps;
  double stepSeconds = 0;  // smoothed wall time per step, validation and traces included
  bool firstTimedStep = true;
  while (!trainer.finished() && !stopRequested_) {
    const int pauseAt = pauseAtStep_;
    if (pauseAt > 0 && trainer.stepsDone() >= pauseAt) {
      pauseAtStep_ = 0;
      pauseRequested_ = true;
    }
    if (pauseRequested_) {
      if (tracedStep != trainer.stepsDone()) {  // show the map of the step we stopped at
        publishTrace(trainer, probe);
        tracedStep = trainer.stepsDone();
      }
      publishPause(trainer.stepsDone());
      if (!waitWhilePaused()) break;
      continue;
    }

    const auto began = Clock::now();
    const TrainPoint step = trainer.trainStep();
    // The trainer validates every train.eval_every steps and at the end; NaN on other steps.
    const LossPoint point{step.step, step.loss, step.val_loss, step.accuracy};
    if (!std::isnan(step.val_loss)) {
      progress.val_loss = step.val_loss;
      progress.accuracy = step.accuracy;
    }
    if (trainer.finished() || Clock::now() - lastTrace >= kTraceInterval) {
      publishTrace(trainer, probe);
      tracedStep = trainer.stepsDone();
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
  publishEnd(trainer.finished() ? State::Finished : State::Stopped);
}

bool TrainingSession::waitWhilePaused() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return !pauseRequested_ || stopRequested_; });
  return !stopRequested_;
}

void TrainingSession::publishTrace(const Trainer& trainer, const std::vector<int>& probe) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->step = trainer.stepsDone();
  snapshot->trace = trainer.trace(probe);
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
