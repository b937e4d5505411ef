#pragma once
// View > Presenter mode: for a class on a projector. Full screen, every text of the interface
// scaled (150, 175 or 200 percent), a high-contrast palette (white on black, yellow highlight),
// the tour text larger still, and the tour dock shown; everything returns as it was when it is
// switched off. Tours are driven from the keyboard: Space / Right, Left, and 1-9 for a choice.
#include <QFont>
#include <QObject>
#include <QPalette>

class QAction;
class QMenu;

namespace attnlab {

class MainWindow;

class PresenterMode : public QObject {
  Q_OBJECT
 public:
  explicit PresenterMode(MainWindow* window);
  // View > Presenter mode (F11) and its scale choices.
  void addTo(QMenu* viewMenu);
  bool isOn() const { return on_; }
  int scalePercent() const { return percent_; }
  void setOn(bool on);
  void setScalePercent(int percent);  // 150..200; applied at once when on

 private:
  void apply();

  MainWindow* window_;
  QAction* toggle_ = nullptr;
  bool on_ = false;
  int percent_ = 175;
  QFont savedFont_;
  QPalette savedPalette_;
  bool wasMaximized_ = false;
};

}  // namespace attnlab
