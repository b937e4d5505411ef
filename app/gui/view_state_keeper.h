#pragma once
// Keeps what the window shows with each saved experiment (io/view_state.h): after every save and
// autosave it writes the view on display, the probe, the selected head, the colour scale and the
// KV-cache view's policy and budget into the folder; opening the folder brings them back.
#include <QObject>

namespace attnlab {

class MainWindow;
struct ViewState;

class ViewStateKeeper : public QObject {
  Q_OBJECT
 public:
  explicit ViewStateKeeper(MainWindow& window);

 private:
  ViewState capture() const;
  void restore(const QString& dir);

  MainWindow& window_;
};

}  // namespace attnlab
