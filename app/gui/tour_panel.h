#pragma once
// The tour dock: the tour's title and progress, a table of contents, the step's text with its
// live numbers, the "predict first" question with its choices, the checks' outcome, and Back /
// Next / Restart. Space or Right goes on, Left goes back (while a tour is open).
#include <QDockWidget>

#include "tour_runner.h"

class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTextBrowser;
class QVBoxLayout;

namespace attnlab {

class MainWindow;

class TourPanel : public QDockWidget {
  Q_OBJECT
 public:
  explicit TourPanel(MainWindow* window);

  TourRunner* runner() const { return runner_; }
  // Opens the dock and starts the shipped tour `name`; false (and nothing changes) if unknown.
  bool startTour(const QString& name);
  void startTour(const Tour& tour);
  // Help > Tours: one entry per shipped tour, and a note on files that were refused.
  void fillMenu(QMenu* menu);
  // The step text's size relative to the normal one (presenter mode enlarges it).
  void setTextScale(double scale);

  // For tests and screenshots.
  QTextBrowser* textBrowser() const { return text_; }
  QLabel* checksLabel() const { return checks_; }
  QPushButton* nextButton() const { return next_; }
  QPushButton* backButton() const { return back_; }
  QComboBox* contents() const { return contents_; }
  QWidget* choicesBox() const { return choices_; }

 private:
  void refresh();
  void rebuildChoices();

  MainWindow* window_;
  TourRunner* runner_;
  QLabel* title_;
  QProgressBar* progress_;
  QComboBox* contents_;
  QTextBrowser* text_;
  QWidget* choices_;
  QVBoxLayout* choicesLayout_;
  QLabel* status_;
  QLabel* checks_;
  QPushButton* back_;
  QPushButton* next_;
  QPushButton* restart_;
  int choicesFor_ = -1;  // the step the choice buttons were made for
  double textScale_ = 1.0;
  double basePointSize_ = 10;  // the text's size before any scaling
};

}  // namespace attnlab
