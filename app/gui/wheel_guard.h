#pragma once
// In a scrolled form, the mouse wheel scrolls the form: a guarded picker or spin box under the
// pointer takes the wheel only once it has the keyboard focus (clicked or tabbed into), so
// scrolling past it never changes a setting by accident.
#include <QObject>

class QWidget;

namespace attnlab {

class WheelGuard : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  void guard(QWidget* widget);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace attnlab
