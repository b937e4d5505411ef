#include "token_strip.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include "tokenizer/vocabulary.h"

namespace attnlab {

namespace {
constexpr int kPadding = 4;  // inside a chip, each side
constexpr int kGap = 3;      // between chips
}  // namespace

TokenStrip::TokenStrip(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setToolTip(tr("The probe's tokens; hover one for its id"));
}

QSize TokenStrip::sizeHint() const { return {200, fontMetrics().height() + 2 * kPadding}; }

void TokenStrip::setTokens(std::shared_ptr<const Vocabulary> vocabulary, std::vector<int> tokens) {
  vocabulary_ = std::move(vocabulary);
  tokens_ = std::move(tokens);
  lefts_.clear();
  int x = 0;
  for (int i = 0; i < count(); ++i) {
    lefts_.push_back(x);
    x += fontMetrics().horizontalAdvance(label(i)) + 2 * kPadding + kGap;
  }
  update();
}

QString TokenStrip::label(int index) const {
  const int id = tokens_[index];
  return vocabulary_ && id >= 0 && id < vocabulary_->size() ? QString::fromStdString(vocabulary_->token(id)) : QStringLiteral("?");
}

QRect TokenStrip::chipRect(int index) const {
  const int width = fontMetrics().horizontalAdvance(label(index)) + 2 * kPadding;
  return {lefts_[index], 0, width, height() - 1};
}

QString TokenStrip::toolTipAt(const QPoint& pos) const {
  for (int i = 0; i < count(); ++i)
    if (chipRect(i).contains(pos)) return tr("id %1: %2").arg(tokens_[i]).arg(label(i));
  return {};
}

bool TokenStrip::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  auto* help = static_cast<QHelpEvent*>(event);
  const QString text = toolTipAt(help->pos());
  if (text.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(help->globalPos(), text, this);
  return true;
}

void TokenStrip::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QColor fill = palette().color(QPalette::AlternateBase), border = palette().color(QPalette::Mid);
  for (int i = 0; i < count() && lefts_[i] < width(); ++i) {
    const QRect r = chipRect(i);
    painter.setPen(border);
    painter.setBrush(fill);
    painter.drawRoundedRect(r, 3, 3);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(r, Qt::AlignCenter, label(i));
  }
}

}  // namespace attnlab
