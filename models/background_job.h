#pragma once
// Runs a view's engine computation (an analysis, a cached generation) off the UI thread and hands
// the result back on it. Jobs run one at a time on the job's own worker thread, nicer than the UI
// (worker_priority.h). "Latest wins": a submit() replaces the job still waiting, if any, so a slow
// job is followed by the newest request only. A running job's result is still delivered when it
// is done (it is newer than what is on screen, and a steady stream of requests must not starve
// the view); cancel() drops it, for when the input it came from is gone (a new experiment).
//
//   job->submit([snapshot] {                          // worker thread: compute from immutable input
//     auto result = std::make_shared<const Spectra>(computeSpectra(*snapshot));
//     return [this, result] { showSpectra(result); };  // UI thread: only if still the latest job
//   });
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>

namespace attnlab {

class BackgroundJob : public QObject {
  Q_OBJECT
 public:
  using Delivery = std::function<void()>;
  using Work = std::function<Delivery()>;

  explicit BackgroundJob(QObject* parent = nullptr);
  // Asks a running job to stop (stopRequested()) and waits for it; its result is dropped.
  ~BackgroundJob() override;

  // For long work, on the worker thread: true once the job's result is no longer wanted (cancel(),
  // or the job's owner is going away). Work that checks it between steps and gives up (by throwing
  // or returning an empty Delivery) keeps closing a view instant. False outside a job.
  static bool stopRequested();

  void submit(Work work);
  void cancel();            // drops the waiting job and the running one's delivery
  bool busy() const { return busy_; }
  void waitForIdle();       // for tests and shutdown: blocks until no job runs or waits

 signals:
  void busyChanged(bool busy);
  // The latest job threw: its message (std::exception::what(), or a generic line).
  void failed(const QString& message);

 private:
  void startNext();  // UI thread

  QThreadPool pool_;  // one thread: jobs of one view never overlap
  Work waiting_;
  bool running_ = false;
  bool busy_ = false;
  quint64 generation_ = 0;  // bumped by cancel(); deliveries of jobs started before are dropped
  std::shared_ptr<std::atomic<bool>> runningStop_;  // the running job's stop flag
};

}  // namespace attnlab
