// BackgroundJob: results come back on the UI thread, the latest submission replaces the one
// waiting, a throwing job reports its message, and a cancelled job delivers nothing.
#include <QSignalSpy>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <stdexcept>

#include "background_job.h"

using namespace attnlab;

class BackgroundJobTest : public QObject {
  Q_OBJECT
 private slots:
  void deliversOnTheUiThreadAndTheLatestWins() {
    BackgroundJob job;
    QSignalSpy busy(&job, &BackgroundJob::busyChanged);
    std::atomic<bool> release{false};
    std::vector<int> delivered;
    QThread* workerThread = nullptr;
    job.submit([&] {
      workerThread = QThread::currentThread();
      while (!release) QThread::msleep(1);  // holds the worker so the next two queue up
      return [&] { delivered.push_back(1); };
    });
    job.submit([] { return BackgroundJob::Delivery{}; });  // waiting: replaced by the next one
    job.submit([] { return [] {}; });
    int third = 0;
    job.submit([&third] {
      third = 3;
      return BackgroundJob::Delivery{};
    });
    QVERIFY(job.busy());
    release = true;
    job.waitForIdle();
    QVERIFY(workerThread && workerThread != QThread::currentThread());
    QCOMPARE(delivered, (std::vector<int>{1}));  // the running job still delivers
    QCOMPARE(third, 3);                           // the last one ran; the two between never did
    QCOMPARE(busy.count(), 2);   // busy once, idle once
    QVERIFY(!job.busy());

    job.submit([&] { return [&] { delivered.push_back(QThread::currentThread() == thread() ? 2 : -2); }; });
    job.waitForIdle();
    QCOMPARE(delivered, (std::vector<int>{1, 2}));
  }

  void aThrowingJobReportsItsMessage() {
    BackgroundJob job;
    QSignalSpy failed(&job, &BackgroundJob::failed);
    job.submit([]() -> BackgroundJob::Delivery { throw std::invalid_argument("budget 0 is too small"); });
    job.waitForIdle();
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.first().first().toString(), QStringLiteral("budget 0 is too small"));
  }

  // A long job that asks stopRequested() ends as soon as its owner goes: closing a view never
  // waits for the rest of an analysis.
  void aLongJobStopsWhenItsOwnerGoes() {
    std::atomic<bool> started{false}, sawStop{false};
    QVERIFY(!BackgroundJob::stopRequested());  // not inside a job
    {
      BackgroundJob job;
      job.submit([&]() -> BackgroundJob::Delivery {
        started = true;
        while (!BackgroundJob::stopRequested()) QThread::msleep(1);  // would run forever otherwise
        sawStop = true;
        return {};
      });
      QTRY_VERIFY(started.load());
    }  // the destructor asks the job to stop, then waits for it
    QVERIFY(sawStop.load());
  }

  void aCancelledJobDeliversNothing() {
    BackgroundJob job;
    bool delivered = false;
    job.submit([&] { return [&] { delivered = true; }; });
    job.cancel();
    job.waitForIdle();
    QVERIFY(!delivered);
    QVERIFY(!job.busy());
  }
};

QTEST_GUILESS_MAIN(BackgroundJobTest)
#include "test_background_job.moc"
