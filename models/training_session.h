#pragma once
// Runs one experiment's training on a worker thread and hands its results to the UI thread.
//
// The worker owns the attnlab::Trainer; the UI thread never calls engine compute. Between steps
// the worker checks the pause/stop flags, then publishes into a mutex-guarded mailbox: new loss
// points are appended, the progress and the probe trace are replaced ("latest wins"), and at most
// one queued notification is in flight. So a slow UI drops stale traces instead of queueing up.
// After the last step the worker stays (state Finished) to trace probe edits until reset/start.
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "model/config.h"
#include "snapshots.h"

namespace attnlab {

class Trainer;

class TrainingSession : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Paused, Finished, Stopped, Failed };
  Q_ENUM(State)

  explicit TrainingSession(QObject* parent = nullptr);
  ~TrainingSession() override;

  State state() const { return state_; }
  // Makes the worker pause by itself once `step` optimiser steps are done (0: never).
  // One-shot: cleared when it fires. Takes effect on the running session or the next start().
  void setPauseAtStep(int step) { pauseAtStep_ = step; }

  // Discards any current run and trains `config` from scratch.
  void start(const ExperimentConfig& config);
  void pause();
  void resume();
  // Ends the run after the current step; its results stay on display.
  void stop();
  // Ends the run and forgets its results (emits cleared()).
  void reset();
  // Replaces the probe the views show: `tokens` (ids of the run's vocabulary, at most the
  // context), or a fresh example drawn from the task. The worker traces it before its next step,
  // at once when paused or finished; a newer request replaces one not yet taken.
  void setProbe(std::vector<int> tokens);
  void drawProbe();

  static QString stateName(State state);

 signals:
  void stateChanged(attnlab::TrainingSession::State state);
  void cleared();
  void lossPointsAdded(const std::vector<attnlab::LossPoint>& points);
  void progressed(const attnlab::ProgressSnapshot& progress);
  void traced(const std::shared_ptr<const attnlab::TraceSnapshot>& trace);
  void failed(const QString& message);
  // The worker has stopped between steps after pause() or the pause-at step, `step` steps done.
  void pausedAt(int step);

 private:
  // Everything the worker hands over, guarded by mutex_.
  struct Mailbox {
    std::vector<LossPoint> points;
    std::optional<ProgressSnapshot> progress;
    std::shared_ptr<const TraceSnapshot> trace;
    std::optional<int> pausedAt;
    std::optional<State> ended;  // Finished, Stopped or Failed once the worker is done
    QString error;
  };

  // What the UI asked the probe to become: tokens, or a draw from the task when empty.
  struct ProbeRequest {
    std::vector<int> tokens;
  };
  // The worker's side of the probe.
  struct WorkerProbe;

  // Worker thread.
  void runWorker(ExperimentConfig config);
  void trainUntilDoneOrStopped(Trainer& trainer);
  void serveProbesUntilStopped(const Trainer& trainer, WorkerProbe& probe);
  bool takeProbeRequest(const Trainer& trainer, WorkerProbe& probe);  // true when the probe changed
  void publishTrace(const Trainer& trainer, WorkerProbe& probe);
  void publishStep(const LossPoint& point, const ProgressSnapshot& progress);
  void publishPause(int step);
  void publishEnd(State how, const QString& error = {});
  void notifyUi();
  bool waitWhilePaused();  // false when asked to stop; returns early for a probe request
  void requestProbe(ProbeRequest request);

  // UI thread.
  void deliver();
  void joinWorker();
  void setState(State state);

  State state_ = State::Idle;
  quint64 run_ = 0;  // bumped by start() and reset(), so stale deliveries are recognised
  QThread* worker_ = nullptr;

  std::mutex mutex_;
  std::condition_variable wake_;  // pause/resume/stop changes, for a paused worker
  std::atomic<bool> pauseRequested_{false};
  std::atomic<bool> stopRequested_{false};
  std::atomic<int> pauseAtStep_{0};
  std::atomic<bool> notificationQueued_{false};
  std::atomic<bool> probeRequested_{false};
  std::optional<ProbeRequest> probeRequest_;  // guarded by mutex_
  Mailbox mailbox_;
};

}  // namespace attnlab
