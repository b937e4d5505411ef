#pragma once
// Runs one experiment's training on a worker thread and hands its results to the UI thread.
//
// While a worker runs, it alone touches the attnlab::Trainer; the UI thread never calls engine
// compute. Between steps the worker serves the UI's requests (save, single step, new probe) and
// checks the pause/stop flags, then publishes into a mutex-guarded mailbox: new loss points are
// appended, the progress and the probe trace are replaced ("latest wins"), and at most one queued
// notification is in flight. So a slow UI drops stale traces instead of queueing up.
//
// Each run (start(), open(), openModel(), continueFor()) has its own heap-allocated state: worker,
// trainer or opened model, requests, flags and mailbox. It trains (or waits, paused), and after the
// last step it stays (state Finished) to trace probe edits and serve saves, until it is stopped or
// discarded. A stopped or failed worker ends at once. stop() joins the worker (it waits for the
// current step); the trainer outlives its worker, so an ended run can still be saved (on the UI
// thread, which owns the trainer once the worker is joined). continueFor() and takeOpenedModel()
// join the finished worker too, which is between two requests then.
//
// Discarding a run (start(), open(), openModel(), reset()) does not wait for its step: the run is
// retired, i.e. asked to stop and detached from the session, so nothing it publishes afterwards
// reaches the signals (deliveries carry the run's id). Its worker ends after the current step,
// frees its trainer or model itself, and a pool thread joins it. Only when a save the run was
// asked for is still unreported does the discard join it, so that saved() reports every request
// before cleared(). A run's worker takes its first step only once the session's previous worker
// has ended (still off the UI thread), so a session never trains two models at once and the
// retired model is freed before the new one is built. The destructor waits for every worker.
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
  bool hasOpenedModel() const;
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
  // Ends the run and forgets its results (emits cleared()); does not wait for the current step.
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
  // The folder crosses to the worker as a plain string: a QString would share its buffer with the
  // caller's copies, whose reference count Qt's uninstrumented library updates out of
  // ThreadSanitizer's sight.
  struct SaveRequest {
    std::string dir;
    SaveKind kind = SaveKind::User;
  };
  struct SaveResult {
    SaveRequest request;
    int step = 0;
    std::string error;
  };
  // Everything the worker hands over, guarded by the run's mutex.
  struct Mailbox {
    std::vector<LossPoint> points;
    std::optional<ProgressSnapshot> progress;
    std::shared_ptr<const TraceSnapshot> trace;
    std::optional<int> tracing;  // tokens of a trace begun and not yet published
    std::vector<SaveResult> saves;
    std::optional<int> pausedAt;
    std::optional<State> ended;  // Finished, Stopped or Failed once training is over
    std::string error;           // plain, like SaveRequest's folder
  };
  // What the UI asked the probe to become: tokens, or a draw from the task when empty.
  struct ProbeRequest {
    std::vector<int> tokens;
  };
  // The worker's side of the probe.
  struct WorkerProbe;
  // One run: its worker, trainer or opened model, requests, flags and mailbox (training_session.cpp).
  struct Run;
  using HeadGains = std::vector<std::vector<float>>;

  // Worker thread (each function serves the run it is given).
  void workerMain(Run& r);
  void runWorker(Run& r);  // r.config, or none: continue r.trainer
  void trainUntilDoneOrStopped(Run& r, Trainer& trainer, WorkerProbe& probe);
  void serveUntilStopped(Run& r, const Trainer& trainer, WorkerProbe& probe);  // after the last step
  void serveRequests(Run& r, const Trainer& trainer, WorkerProbe& probe);       // saves, then a probe edit
  void runOpenedWorker(Run& r);  // r.openedModel: traces probe edits until stopped
  void saveRequested(Run& r, const Trainer* trainer);
  bool takeGrantedStep(Run& r);
  bool takeProbeRequest(Run& r, const Trainer& trainer, WorkerProbe& probe);  // true when the probe or gains changed
  // The same for any model: `draw` gives a fresh probe example.
  bool takeProbeRequest(Run& r, const ModelConfig& shape, const std::function<std::vector<int>(Rng&)>& draw,
                        WorkerProbe& probe);
  void finishWorker(Run& r, std::optional<State> how, const QString& error = {});
  void publishTrace(Run& r, const Trainer& trainer, WorkerProbe& probe);
  void publishTrace(Run& r, const Model& model, int step, WorkerProbe& probe);
  void publishStep(Run& r, const LossPoint& point, const ProgressSnapshot& progress);
  void publishPause(Run& r, int step);
  void publishEnd(Run& r, State how, const QString& error = {});
  void notifyUi(Run& r);
  bool waitWhilePaused(Run& r);  // false when asked to stop; returns early for any request
  bool takeTurn(Run& r);         // waits until no other worker of the session lives; false when asked to stop
  void releaseTurn();

  // UI thread.
  void launch(std::shared_ptr<Run> run);
  std::shared_ptr<Run> newRun();
  // Takes the current run out of the session: asks it to stop (joining it only when a save it was
  // asked for is unreported), reports its reported saves, keeps the head gains it did not take.
  std::shared_ptr<Run> detachRun();
  void dispose(std::shared_ptr<Run> run);  // a pool thread joins its worker and frees it
  void requestStop(Run& r);
  void joinWorker(Run& r);
  void requestProbe(ProbeRequest request);
  void deliver(quint64 runId);
  void emitSaves(const std::vector<SaveResult>& saves);
  void setState(State state);

  State state_ = State::Idle;
  std::shared_ptr<Run> run_;  // the current run, null when none
  quint64 lastRunId_ = 0;     // ids of runs; deliveries name the run they come from
  std::atomic<int> pauseAtStep_{0};  // read and cleared by the current run's worker
  std::vector<std::vector<float>> headGains_;  // UI thread: the gains last asked for
  std::optional<HeadGains> pendingGains_;      // UI thread: asked for with no run, or untaken by a discarded one

  // At most one worker of the session computes: the others wait for the turn (guarded by turnMutex_).
  std::mutex turnMutex_;
  std::condition_variable turnFree_;
  bool turnTaken_ = false;
  // Joins retired workers and frees discarded trainers and opened models off the UI thread; waited
  // for when the session goes.
  QThreadPool disposal_;
};

}  // namespace attnlab
