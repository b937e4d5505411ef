#pragma once
// The welcome page: shown on the first start (and from Help > Welcome page), it offers the
// tours, the presets with what each shows, opening a saved experiment, and opening a model
// folder (disabled: the app cannot import outside models yet). Closing it is remembered
// (QSettings "welcome/dismissed"), unless "Show this page at start" stays ticked.
#include <QDialog>

class QCheckBox;

namespace attnlab {

class MainWindow;

class WelcomePage : public QDialog {
  Q_OBJECT
 public:
  static constexpr const char* kDismissedKey = "welcome/dismissed";
  explicit WelcomePage(MainWindow* window);

  // Whether the page should open by itself at this start.
  static bool wanted();
  // Shows the window's page (one per window), making it if needed.
  static WelcomePage* showFor(MainWindow* window);

 protected:
  void done(int result) override;

 private:
  QCheckBox* showAtStart_;
};

}  // namespace attnlab
