#pragma once
// What the app reopens when it starts: the trained state it showed last, not only its settings.
//
// It remembers (in QSettings, lastState/...) the folder last saved or opened, the newest autosave,
// and whether the app is running. On the next start, after a crash or a kill (the app was still
// marked running) it offers "Recover unsaved experiment from <time>?" when that autosave is newer
// than the last saved state, and recovers it as unsaved work (weights, history, settings).
// Otherwise it reopens the last saved folder with its weights, or says why it did not. A new
// experiment (Apply, a preset, Reset) has no trained state: the next start shows its settings.
#include <QObject>
#include <QString>
#include <functional>

class QWidget;

namespace attnlab {

class ExperimentFiles;

class LastState : public QObject {
  Q_OBJECT
 public:
  // Answers the recovery question: true to recover.
  using RecoverPrompt = std::function<bool(const QString& question)>;

  // Starts the bookkeeping and marks the app running; `window` parents the question.
  LastState(ExperimentFiles& files, QWidget* window);

  void setRecoverPrompt(RecoverPrompt prompt) { prompt_ = std::move(prompt); }
  // Recovers or reopens the last trained state. True when one is on display; false with `why`
  // saying plainly what was not reopened (empty when there was nothing to reopen).
  bool reopen(QString& why);
  // The app closes normally: the next start offers no recovery.
  void markClosed();

 private:
  bool recoverAutosave(QString& message);
  void forget();  // the shown experiment is new: no trained state to reopen

  ExperimentFiles& files_;
  QWidget* window_;
  RecoverPrompt prompt_;
  bool crashedBefore_ = false;  // the previous run ended without markClosed()
  bool reopening_ = false;      // our own opening is not a new last state
};

}  // namespace attnlab
