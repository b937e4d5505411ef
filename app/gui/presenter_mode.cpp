#include "presenter_mode.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QMenu>

#include "attention_heatmap_view.h"
#include "main_window.h"
#include "tour_panel.h"

namespace attnlab {

namespace {

QPalette highContrast() {
  QPalette p;
  const QColor black(0, 0, 0), white(255, 255, 255), yellow(255, 221, 0), grey(40, 40, 40);
  for (QPalette::ColorGroup g : {QPalette::Active, QPalette::Inactive}) {
    p.setColor(g, QPalette::Window, black);
    p.setColor(g, QPalette::WindowText, white);
    p.setColor(g, QPalette::Base, black);
    p.setColor(g, QPalette::AlternateBase, grey);
    p.setColor(g, QPalette::Text, white);
    p.setColor(g, QPalette::Button, grey);
    p.setColor(g, QPalette::ButtonText, white);
    p.setColor(g, QPalette::Highlight, yellow);
    p.setColor(g, QPalette::HighlightedText, black);
    p.setColor(g, QPalette::ToolTipBase, black);
    p.setColor(g, QPalette::ToolTipText, white);
    p.setColor(g, QPalette::Link, yellow);
  }
  p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(150, 150, 150));
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(150, 150, 150));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(150, 150, 150));
  p.setColor(QPalette::Disabled, QPalette::Button, grey);
  p.setColor(QPalette::Disabled, QPalette::Window, black);
  p.setColor(QPalette::Disabled, QPalette::Base, black);
  return p;
}

}  // namespace

PresenterMode::PresenterMode(MainWindow* window) : QObject(window), window_(window) {}

void PresenterMode::addTo(QMenu* viewMenu) {
  toggle_ = viewMenu->addAction(tr("&Presenter mode"));
  toggle_->setObjectName(QStringLiteral("presenterMode"));
  toggle_->setCheckable(true);
  toggle_->setShortcut(Qt::Key_F11);
  toggle_->setToolTip(tr("Full screen, larger text, high contrast: for teaching from a projector (F11)"));
  connect(toggle_, &QAction::toggled, this, &PresenterMode::setOn);
  QMenu* scale = viewMenu->addMenu(tr("Presenter text size"));
  auto* group = new QActionGroup(scale);
  for (int percent : {150, 175, 200}) {
    QAction* a = scale->addAction(tr("%1%").arg(percent), this, [this, percent] { setScalePercent(percent); });
    a->setCheckable(true);
    a->setChecked(percent == percent_);
    group->addAction(a);
  }
}

void PresenterMode::setOn(bool on) {
  if (on == on_) return;
  on_ = on;
  if (toggle_ && toggle_->isChecked() != on) toggle_->setChecked(on);
  if (on) {
    savedFont_ = QApplication::font();
    savedPalette_ = QApplication::palette();
    wasMaximized_ = window_->isMaximized();
    window_->showFullScreen();
    window_->tourPanel()->show();
  } else {
    QApplication::setFont(savedFont_);
    QApplication::setPalette(savedPalette_);
    window_->tourPanel()->setTextScale(1.0);
    window_->view<AttentionHeatmapView>()->setValuesShown(false);
    wasMaximized_ ? window_->showMaximized() : window_->showNormal();
    return;
  }
  apply();
}

void PresenterMode::setScalePercent(int percent) {
  percent_ = std::clamp(percent, 150, 200);
  if (on_) apply();
}

void PresenterMode::apply() {
  QFont font = savedFont_;
  font.setPointSizeF(savedFont_.pointSizeF() * percent_ / 100.0);
  QApplication::setFont(font);
  QApplication::setPalette(highContrast());
  window_->tourPanel()->setTextScale(percent_ / 100.0 * 1.25);
  window_->view<AttentionHeatmapView>()->setValuesShown(true);  // weights as text: nobody in the room can hover
}

}  // namespace attnlab
