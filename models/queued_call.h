#pragma once
// Hands a function to the thread of a QObject through its event queue: how worker threads give
// their results to the UI thread.
//
// Qt orders the post before the call with its own futex-based locking, which ThreadSanitizer
// cannot see in Debian's uninstrumented Qt: it would report the function's captures, built on the
// worker and read on the UI thread, as a race. An empty critical section on both sides makes that
// order visible to it, for one uncontended lock per delivery.
#include <QMetaObject>
#include <QObject>

#include <mutex>
#include <utility>

namespace attnlab {

std::mutex& queuedCallHandoff();

// Runs fn on context's thread when its event loop next turns; dropped if context is gone by then.
template <class Fn>
void postQueued(QObject* context, Fn&& fn) {
  std::lock_guard posting(queuedCallHandoff());
  QMetaObject::invokeMethod(
      context,
      [fn = std::forward<Fn>(fn)]() mutable {
        { std::lock_guard received(queuedCallHandoff()); }  // the post happened before this
        fn();
      },
      Qt::QueuedConnection);
}

}  // namespace attnlab
