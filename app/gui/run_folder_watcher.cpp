#include "run_folder_watcher.h"

#include <QDir>
#include <QFileInfo>
#include <memory>

#include "experiment_files.h"
#include "io/checkpoint.h"

namespace attnlab {

RunFolderWatcher::RunFolderWatcher(ExperimentFiles& files, QObject* parent)
    : RunFolderWatcher(Target{[&files] { return files.hasUnsavedSteps(); },
                              [&files](const QString& folder, LoadedCheckpoint&& loaded) { return files.adopt(folder, std::move(loaded)); }},
                       parent) {}

RunFolderWatcher::RunFolderWatcher(Target target, QObject* parent) : QObject(parent), target_(std::move(target)), job_(this) {
  timer_.setInterval(2000);
  connect(&timer_, &QTimer::timeout, this, &RunFolderWatcher::look);
}

QString RunFolderWatcher::watch(const QString& dir) {
  const QDir folder(dir);
  QString checkpoint;
  if (QFileInfo::exists(folder.filePath("checkpoint/config.json")) || QFileInfo::exists(folder.filePath("history.csv")))
    checkpoint = folder.filePath("checkpoint");  // a train.py run folder (the checkpoint may not exist yet)
  else if (QFileInfo::exists(folder.filePath("config.json")))
    checkpoint = folder.path();
  else
    return tr("%1 is not a run folder (no checkpoint/ or history.csv) nor a checkpoint (no config.json)").arg(QDir::toNativeSeparators(dir));
  checkpoint_ = QDir::cleanPath(checkpoint);
  shown_.clear();
  timer_.start();
  emit watchingChanged(true);
  emit statusMessage(tr("Watching %1").arg(QDir::toNativeSeparators(checkpoint_)));
  look();
  return {};
}

void RunFolderWatcher::stop() {
  if (!timer_.isActive()) return;
  timer_.stop();
  job_.cancel();
  emit watchingChanged(false);
  emit statusMessage(tr("Stopped watching %1").arg(QDir::toNativeSeparators(checkpoint_)));
}

QString RunFolderWatcher::stamp() const {
  QString s;
  for (const char* file : {"config.json", "model.safetensors", "history.csv"}) {
    const QFileInfo info(QDir(checkpoint_).filePath(file));
    if (!info.exists()) return {};
    s += QString::number(info.size()) + ":" + QString::number(info.lastModified().toMSecsSinceEpoch()) + ";";
  }
  return s;
}

void RunFolderWatcher::look() {
  const QString now = stamp();
  if (now.isEmpty() || now == shown_ || job_.busy()) return;
  if (target_.hasOwnSteps()) {  // the user trained the watched experiment: leave it alone
    stop();
    emit statusMessage(tr("Stopped watching: the experiment on display has trained steps of its own"));
    return;
  }
  const std::string folder = checkpoint_.toStdString();
  job_.submit([this, folder, now] {
    auto loaded = std::make_shared<LoadedCheckpoint>();
    const QString why = QString::fromStdString(loadCheckpoint(folder, *loaded));
    return [this, loaded, why, now] {
      if (!watching()) return;
      if (stamp() != now) return;  // replaced while being read: the next look reads the new one
      shown_ = now;  // a damaged checkpoint is not retried until it changes
      if (!why.isEmpty()) {
        emit statusMessage(tr("Watched checkpoint not readable: %1").arg(why));
        return;
      }
      const int steps = loaded->trainer->stepsDone();
      if (target_.adopt(checkpoint_, std::move(*loaded)).isEmpty())
        emit statusMessage(tr("Watching %1: step %2").arg(QDir::toNativeSeparators(checkpoint_)).arg(steps));
    };
  });
}

}  // namespace attnlab
