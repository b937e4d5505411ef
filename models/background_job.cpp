#include "background_job.h"

#include "queued_call.h"
#include "worker_priority.h"

#include <QCoreApplication>
#include <QThread>
#include <exception>

namespace attnlab {

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
}

namespace {
thread_local const std::atomic<bool>* currentStop = nullptr;  // the stop flag of the job this thread runs
}  // namespace

bool BackgroundJob::stopRequested() { return currentStop && currentStop->load(); }

BackgroundJob::~BackgroundJob() {
  ++generation_;
  waiting_ = nullptr;
  if (runningStop_) *runningStop_ = true;
  pool_.waitForDone();
}

void BackgroundJob::submit(Work work) {
  waiting_ = std::move(work);
  if (!busy_) emit busyChanged(busy_ = true);
  if (!running_) startNext();
}

void BackgroundJob::cancel() {
  ++generation_;
  waiting_ = nullptr;
  if (runningStop_) *runningStop_ = true;
  if (!running_ && busy_) emit busyChanged(busy_ = false);
}

void BackgroundJob::waitForIdle() {
  while (busy_) {
    pool_.waitForDone();
    QCoreApplication::sendPostedEvents(this);  // deliveries queued to this object
  }
}

void BackgroundJob::startNext() {
  Work work = std::move(waiting_);
  waiting_ = nullptr;
  running_ = true;
  const quint64 generation = generation_;
  runningStop_ = std::make_shared<std::atomic<bool>>(false);
  pool_.start([this, work = std::move(work), generation, stop = runningStop_]() mutable {
    runBelowTheUi();
    Delivery delivery;
    QString error;
    currentStop = stop.get();
    try {
      delivery = work();
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    } catch (...) {
      error = tr("the computation failed with an unknown error");
    }
    currentStop = nullptr;
    // The work's captures (often copies of the UI's strings, whose shared buffers Qt counts out of
    // ThreadSanitizer's sight) are released before the hand-off, so that the hand-off orders them.
    work = nullptr;
    // Back on the UI thread (the event is dropped if this object is gone by then).
    postQueued(this, [this, delivery = std::move(delivery), error = std::move(error), generation] {
      running_ = false;
      const bool latest = generation == generation_;
      if (latest) {
        if (!error.isEmpty()) emit failed(error);
        else if (delivery) delivery();
      }
      if (waiting_) return startNext();
      if (busy_ && !running_) emit busyChanged(busy_ = false);  // the delivery may have started the next job itself
    });
  });
}

}  // namespace attnlab
