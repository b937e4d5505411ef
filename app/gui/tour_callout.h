#pragma once
// A tour's "look here": a coloured frame around a widget of the window and a bubble with a short
// text beside it, drawn over the window (mouse clicks pass through) until the step changes.
#include <QPointer>
#include <QWidget>

namespace attnlab {

class TourCallout : public QWidget {
  Q_OBJECT
 public:
  explicit TourCallout(QWidget* window);
  void point(QWidget* target, const QString& text);  // null target: hidden
  QWidget* target() const { return target_; }
  QString text() const { return text_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  void follow();  // fills the window, above everything, and repaints
  QPointer<QWidget> target_;
  QString text_;
};

}  // namespace attnlab
