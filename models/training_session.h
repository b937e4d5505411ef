#pragma once
// Runs one experiment's training on a worker thread and hands its results to the UI thread.
//
// While a worker runs, it alone touches the attnlab::Trainer; the UI thread never calls engine
// compute. Between steps the worker serves the UI's requests (save, single step, new probe) and
// checks the pause/stop flags, then publishes into a mutex-guarded mailbox: new loss points are
// appended, the progress and the probe trace are replaced ("latest wins"), and at most one queued
// notification is in flight. So a slow UI drops stale traces instead of queueing up.
//
// One worker per experiment: start() or open() launches it; it trains (or waits, paused), and
// after the last step it stays (state Finished) to trace probe edits and serve saves, until
// stop(), reset(), start(), open() or the destructor joins it. A stopped or failed worker ends at
// once. The trainer outlives its worker, so an ended run can still be saved (on the UI thread,
// which owns the trainer once the worker is joined).
#include <QObject>
#include <QString>
#include <QThread>
#include <QThreadPool>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "experiment/experiment_config.h"
#include "core/random.h"
#include "snapshots.h"

namespace attnlab {

class Trainer;

class TrainingSession : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Paused, Finished, Stopped, Failed };
  Q_ENUM(State)
  enum class SaveKind { User, Autosave };  // passed through to saved(), for the caller's bookkeeping
  Q_ENUM(SaveKind)

  explicit TrainingSession(QObject* parent = nullptr);
  ~TrainingSession() override;

  State state() const { return state_; }
  // Makes the worker pause by itself once `step` optimiser steps are done (0: never).
  // One-shot: cleared when it fires. Takes effect on the running session or the next start().
  void setPauseAtStep(int step) { pauseAtStep_ = step; }

  // Discards any current run and trains `config` from scratch.
  void start(const ExperimentConfig& config);
  // Discards any current run and takes over a restored experiment (a loaded checkpoint): emits
  // cleared(), its history as lossPointsAdded() and its progress, traces its probe, and waits
  // Paused at its last step (Finished if it has done all its steps). resume() continues training.
  void open(std::unique_ptr<Trainer> trainer);
  // Discards any current run and shows `model`, opened from a Hugging Face folder (hf/hf_model.h):
  // there is no trainer, so nothing trains or saves. The worker traces `probe` (ids of
  // `vocabulary`), then each probe edit and head ablation, with the step shown as 0; state Finished.
  // `name` (e.g. "gpt2") is what captions show in place of a training step.
  void openModel(std::unique_ptr<Model> model, std::shared_ptr<const Vocabulary> vocabulary, std::vector<int> probe,
                 std::string name = "opened model");
  bool hasOpenedModel() const { return openedModel_ != nullptr; }
  // Ends the opened model's worker and hands the model over (to be fine-tuned around a trainer,
  // which open() then takes); state Idle, the views keep their last picture. Null when none is open.
  std::unique_ptr<Model> takeOpenedModel();
  // A finished run trains `moreSteps` further steps ("Continue" in the window): its planned steps
  // grow by that many, the learning rate stays at the schedule's final value (Trainer::extendSteps)
  // and the history goes on from the last step. Nothing happens unless it is Finished with a trainer.
  void continueFor(int moreSteps);
  void pause();
  void resume();
  // While paused: the worker takes one optimiser step, publishes it with its map, and stays paused.
  void step();
  // Ends the run after the current step and joins the worker; its results stay on display and
  // save() still works (now on the calling thread). A finished run stops tracing probe edits.
  void stop();
  // Ends the run and forgets its results (emits cleared()).
  void reset();
  // Replaces the probe the views show: `tokens` (ids of the run's vocabulary, at most the
  // context), or a fresh example drawn from the task. The worker traces it before its next step,
  // at once when paused or finished; a newer request replaces one not yet taken.
  void setProbe(std::vector<int> tokens);
  void drawProbe();
  // Switches heads off (or scales them) in what the views show, not in training: gains[layer][head],
  // 0 ablates a head; empty restores every head. The worker retraces the probe with them, and
  // every published ModelSnapshot carries them. Gains shaped unlike the model are ignored.
  void setHeadGains(std::vector<std::vector<float>> gains);
  const std::vector<std::vector<float>>& headGains() const { return headGains_; }

  // True when there is an experiment save() can write (training, paused, or ended with a model).
  bool hasExperiment() const;
  // Writes the experiment as a checkpoint folder (io/checkpoint.h, atomic). While a worker is
  // alive (training, paused or finished) it saves between two steps; otherwise it happens now.
  // saved() reports each request.
  void save(const QString& dir, SaveKind kind = SaveKind::User);

  static QString stateName(State state);

 signals:
  void stateChanged(attnlab::TrainingSession::State state);
  void cleared();
  void lossPointsAdded(const std::vector<attnlab::LossPoint>& points);
  void progressed(const attnlab::ProgressSnapshot& progress);
  void traced(const std::shared_ptr<const attnlab::TraceSnapshot>& trace);
  // An opened model's worker has begun tracing a probe of `tokens` tokens (traced() follows): a
  // long probe takes seconds, which the window shows.
  void tracing(int tokens);
  void failed(const QString& message);
  // The worker has stopped between steps after pause() or the pause-at step, `step` steps done.
  void pausedAt(int step);
  // A save() request is done: `error` is empty on success; `step` is the number of steps saved.
  void saved(const QString& dir, int step, const QString& error, attnlab::TrainingSession::SaveKind kind);

 private:
  struct SaveRequest {
    QString dir;
    SaveKind kind = SaveKind::User;
  };
  struct SaveResult {
    SaveRequest request;
    int step = 0;
    QString error;
  };
  // Everything the worker hands over, guarded by mutex_.
  struct Mailbox {
    std::vector<LossPoint> points;
    std::optional<ProgressSnapshot> progress;
    std::shared_ptr<const TraceSnapshot> trace;
    std::optional<int> tracing;  // tokens of a trace begun and not yet published
    std::vector<SaveResult> saves;
    std::optional<int> pausedAt;
    std::optional<State> ended;  // Finished, Stopped or Failed once training is over
    QString error;
  };
  // What the UI asked the probe to become: tokens, or a draw from the task when empty.
  struct ProbeRequest {
    std::vector<int> tokens;
  };
  // The worker's side of the probe.
  struct WorkerProbe;

  // Worker thread.
  void runWorker(std::optional<ExperimentConfig> config);  // none: continue trainer_
  void trainUntilDoneOrStopped(Trainer& trainer, WorkerProbe& probe);
  void serveUntilStopped(const Trainer& trainer, WorkerProbe& probe);  // after the last step
  void serveRequests(const Trainer& trainer, WorkerProbe& probe);       // saves, then a probe edit
  void runOpenedWorker();  // openedModel_: traces probe edits until stopped
  void saveRequested(const Trainer* trainer);
  bool takeGrantedStep();
  bool takeProbeRequest(const Trainer& trainer, WorkerProbe& probe);  // true when the probe or gains changed
  // The same for any model: `draw` gives a fresh probe example.
  bool takeProbeRequest(const ModelConfig& shape, const std::function<std::vector<int>(Rng&)>& draw, WorkerProbe& probe);
  void finishWorker(std::optional<State> how, const QString& error = {});
  void publishTrace(const Trainer& trainer, WorkerProbe& probe);
  void publishTrace(const Model& model, int step, WorkerProbe& probe);
  void publishStep(const LossPoint& point, const ProgressSnapshot& progress);
  void publishPause(int step);
  void publishEnd(State how, const QString& error = {});
  void notifyUi();
  bool waitWhilePaused();  // false when asked to stop; returns early for any request

  // UI thread.
  void launch(std::optional<ExperimentConfig> config);
  void discardRun();  // joins the worker; saves it had pending are still reported
  void requestProbe(ProbeRequest request);
  void deliver();
  void emitSaves(const std::vector<SaveResult>& saves);
  void joinWorker();
  void setState(State state);

  State state_ = State::Idle;
  quint64 run_ = 0;  // bumped by start(), open() and reset(), so stale deliveries are recognised
  QThread* worker_ = nullptr;
  // Used only by the worker while one is alive, only by the UI thread otherwise (joins separate them).
  std::unique_ptr<Trainer> trainer_;
  // An opened model instead of a trainer (openModel()); the same threading rule.
  std::unique_ptr<Model> openedModel_;
  std::shared_ptr<const Vocabulary> openedVocabulary_;
  std::vector<int> openedProbe_;
  std::string openedName_;

  std::mutex mutex_;
  std::condition_variable wake_;  // pause/resume/stop/step/save/probe changes, for a waiting worker
  std::atomic<bool> pauseRequested_{false};
  std::atomic<bool> stopRequested_{false};
  std::atomic<int> pauseAtStep_{0};
  std::atomic<bool> notificationQueued_{false};
  std::atomic<bool> probeRequested_{false};
  std::optional<ProbeRequest> probeRequest_;  // guarded by mutex_
  std::optional<std::vector<std::vector<float>>> gainsRequest_;  // guarded by mutex_
  std::vector<std::vector<float>> headGains_;  // UI thread: the gains last asked for
  int continueSteps_ = 0;  // set by continueFor() before the launch; the worker extends the run by it
  int stepsGranted_ = 0;                      // guarded by mutex_: single steps asked for while paused
  std::vector<SaveRequest> saveRequests_;     // guarded by mutex_
  bool workerDone_ = false;                   // guarded by mutex_: the worker takes no more requests
  Mailbox mailbox_;
  // Frees discarded trainers and opened models off the UI thread; waits for them when the session goes.
  QThreadPool disposal_;
};

}  // namespace attnlab
