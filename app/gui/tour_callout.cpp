#include "tour_callout.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>

namespace attnlab {

namespace {
const QColor kCalloutColour(230, 120, 0);
constexpr int kFrame = 4;
}  // namespace

TourCallout::TourCallout(QWidget* window) : QWidget(window) {
  setAttribute(Qt::WA_TransparentForMouseEvents);
  setAttribute(Qt::WA_NoSystemBackground);
  setObjectName(QStringLiteral("tourCallout"));
  window->installEventFilter(this);
  hide();
}

void TourCallout::point(QWidget* target, const QString& text) {
  if (target_) target_->removeEventFilter(this);
  target_ = target;
  text_ = text;
  if (!target) return hide();
  target->installEventFilter(this);
  follow();
  show();
}

bool TourCallout::eventFilter(QObject* watched, QEvent* event) {
  const QEvent::Type t = event->type();
  if (target_ && (t == QEvent::Resize || t == QEvent::Move || t == QEvent::Show || t == QEvent::Hide)) follow();
  return QWidget::eventFilter(watched, event);
}

void TourCallout::follow() {
  setGeometry(parentWidget()->rect());
  raise();
  update();
}

void TourCallout::paintEvent(QPaintEvent*) {
  if (!target_ || !target_->isVisible()) return;
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QRect box = QRect(target_->mapTo(parentWidget(), QPoint(0, 0)), target_->size()).adjusted(2, 2, -2, -2);
  p.setPen(QPen(kCalloutColour, kFrame));
  p.setBrush(Qt::NoBrush);
  p.drawRoundedRect(box, 8, 8);
  if (text_.isEmpty()) return;
  // The bubble goes below the frame when there is room, else inside its top right corner (a
  // frame may fill most of the window), where the views keep their legends rather than data.
  QFont font = p.font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 1.15);
  p.setFont(font);
  const int width = std::min(380, std::max(160, box.width() - 24));
  const QRect textRect = p.fontMetrics().boundingRect(QRect(0, 0, width, 400), Qt::TextWordWrap, text_);
  QRect bubble(0, 0, textRect.width() + 20, textRect.height() + 14);
  if (box.bottom() + bubble.height() + 12 < height()) bubble.moveTopLeft({box.left() + 12, box.bottom() + 8});
  else bubble.moveTopRight({box.right() - 12, box.top() + 12});
  p.setPen(Qt::NoPen);
  p.setBrush(kCalloutColour);
  p.drawRoundedRect(bubble, 8, 8);
  p.setPen(Qt::white);
  p.drawText(bubble.adjusted(10, 7, -10, -7), Qt::TextWordWrap, text_);
}

}  // namespace attnlab
