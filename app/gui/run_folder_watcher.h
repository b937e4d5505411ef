#pragma once
// File > Watch Run Folder: follows a folder that a running PyTorch export (train.py) writes into,
// local or on a mounted or synced cluster folder. Every two seconds it looks (a stat, on the UI
// thread) at the run's checkpoint; when a new one has landed it reads it on a worker thread and
// opens it like File > Open, so every view (training curves, attention, spectra history, head
// table, KV cache) shows the run at that checkpoint. The exporter swaps checkpoints atomically;
// a checkpoint that changes while it is being read is dropped and read again at the next look.
// Where a checkpoint goes is the watcher's target: the main window's experiment (ExperimentFiles),
// or a comparison's run pane.
#include <QDateTime>
#include <functional>
#include <memory>
#include <QObject>
#include <QString>
#include <QTimer>

#include "background_job.h"

namespace attnlab {

class ExperimentFiles;
struct LoadedCheckpoint;

class RunFolderWatcher : public QObject {
  Q_OBJECT
 public:
  struct Target {
    std::function<bool()> hasOwnSteps;  // the target trained steps of its own: watching stops
    // Takes a checkpoint read from `folder`; returns "" or why it could not.
    std::function<QString(const QString& folder, LoadedCheckpoint&& loaded)> adopt;
  };
  explicit RunFolderWatcher(ExperimentFiles& files, QObject* parent = nullptr);
  RunFolderWatcher(Target target, QObject* parent = nullptr);

  // `dir` is a run folder (holding checkpoint/) or a checkpoint folder itself. Returns "" and starts
  // watching (the current checkpoint, if any, opens at once), or the one-line reason it cannot.
  QString watch(const QString& dir);
  void stop();
  bool watching() const { return timer_.isActive(); }
  QString checkpointFolder() const { return checkpoint_; }

 signals:
  void statusMessage(const QString& text);
  void watchingChanged(bool watching);

 private:
  QString stamp() const;  // what identifies the checkpoint on disk now ("" while there is none)
  void look();

  Target target_;
  QTimer timer_;
  BackgroundJob job_;
  QString checkpoint_;
  QString shown_;  // stamp of the checkpoint on display
};

}  // namespace attnlab
