#include "wheel_guard.h"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QScrollBar>
#include <QWheelEvent>

namespace attnlab {

void WheelGuard::guard(QWidget* widget) {
  widget->setFocusPolicy(Qt::StrongFocus);  // not WheelFocus: the wheel must not give it focus either
  widget->installEventFilter(this);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  auto* widget = qobject_cast<QWidget*>(watched);
  if (event->type() != QEvent::Wheel || !widget || widget->hasFocus()) return false;
  // The form around it scrolls instead.
  for (QWidget* w = widget->parentWidget(); w; w = w->parentWidget())
    if (auto* scroll = qobject_cast<QAbstractScrollArea*>(w)) {
      QCoreApplication::sendEvent(scroll->verticalScrollBar(), event);
      break;
    }
  return true;
}

}  // namespace attnlab
