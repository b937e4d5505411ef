#include "last_state.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QScopeGuard>
#include <QSettings>

#include "experiment_files.h"
#include "io/checkpoint.h"

namespace attnlab {

namespace {

const QString kFolderKey = QStringLiteral("lastState/folder");      // last saved or opened; empty: a new experiment
const QString kSinceKey = QStringLiteral("lastState/since");        // when that state began
const QString kAutosaveKey = QStringLiteral("lastState/autosave");  // the newest autosave folder
const QString kAutosavedAtKey = QStringLiteral("lastState/autosavedAt");
const QString kAutosaveStepKey = QStringLiteral("lastState/autosaveStep");
const QString kAutosaveOfKey = QStringLiteral("lastState/autosaveOf");  // the folder File > Save wrote then
const QString kRunningKey = QStringLiteral("lastState/running");

void remember(const QString& folder) {
  QSettings settings;
  settings.setValue(kFolderKey, folder);
  settings.setValue(kSinceKey, QDateTime::currentDateTimeUtc());
}

QString native(const QString& dir) { return QDir::toNativeSeparators(dir); }

}  // namespace

LastState::LastState(ExperimentFiles& files, QWidget* window) : QObject(window), files_(files), window_(window) {
  prompt_ = [this](const QString& question) {
    QMessageBox box(QMessageBox::Question, tr("Recover unsaved work"), question, QMessageBox::NoButton, window_);
    QPushButton* recover = box.addButton(tr("Recover"), QMessageBox::AcceptRole);
    box.addButton(tr("Don\u2019t recover"), QMessageBox::RejectRole);
    box.setDefaultButton(recover);
    box.exec();
    return box.clickedButton() == recover;
  };
  QSettings settings;
  crashedBefore_ = settings.value(kRunningKey, false).toBool();
  settings.setValue(kRunningKey, true);
  settings.sync();  // a kill right after the start must still find the mark

  connect(&files_, &ExperimentFiles::savedTo, this, [this](const QString& dir, int step, TrainingSession::SaveKind kind) {
    if (kind == TrainingSession::SaveKind::User) return remember(dir);
    QSettings settings;
    settings.setValue(kAutosaveKey, dir);
    settings.setValue(kAutosavedAtKey, QDateTime::currentDateTimeUtc());
    settings.setValue(kAutosaveStepKey, step);
    settings.setValue(kAutosaveOfKey, files_.currentFolder());
    settings.sync();  // what a crash must not lose
  });
  connect(&files_, &ExperimentFiles::opened, this, [this](const ExperimentConfig&, const QString& dir) {
    if (!reopening_) remember(dir);
  });
  connect(&files_, &ExperimentFiles::startedNewExperiment, this, [this] {
    if (!reopening_) remember({});
  });
}

void LastState::markClosed() { QSettings().setValue(kRunningKey, false); }

bool LastState::reopen(QString& why) {
  why.clear();
  reopening_ = true;
  const auto done = qScopeGuard([this] { reopening_ = false; });
  QString recovery;
  if (crashedBefore_ && recoverAutosave(recovery)) {
    why = recovery;
    return true;
  }
  const QString note = recovery.isEmpty() ? QString() : recovery + QLatin1Char(' ');  // a recovery that failed says so
  const QString folder = QSettings().value(kFolderKey).toString();
  if (folder.isEmpty()) {
    if (QSettings().contains(kFolderKey))
      why = note + tr("Started with the last experiment's settings, untrained: it was never saved.");
    return false;
  }
  LoadedCheckpoint loaded;
  if (const std::string reason = loadCheckpoint(folder.toStdString(), loaded); !reason.empty()) {
    why = note + tr("Did not reopen %1: %2. Showing the last settings, untrained.").arg(native(folder), QString::fromStdString(reason));
    return false;
  }
  const int steps = loaded.trainer->stepsDone();
  if (const QString refused = files_.adopt(folder, std::move(loaded)); !refused.isEmpty()) {
    why = note + tr("Did not reopen %1: %2.").arg(native(folder), refused);
    return false;
  }
  why = note + tr("Reopened %1 at step %2, as it was last saved.").arg(native(folder)).arg(steps);
  return true;
}

// After a crash: offers the autosave if it is newer than the last saved state. True when recovered;
// `message` says what happened (empty when there was nothing to offer).
bool LastState::recoverAutosave(QString& message) {
  QSettings settings;
  const QString autosave = settings.value(kAutosaveKey).toString();
  const QDateTime autosavedAt = settings.value(kAutosavedAtKey).toDateTime();
  const QDateTime since = settings.value(kSinceKey).toDateTime();
  if (autosave.isEmpty() || !autosavedAt.isValid() || (since.isValid() && autosavedAt <= since)) return false;
  if (!QFileInfo(autosave).isDir()) return false;
  const QString question = tr("Recover unsaved experiment from %1?\n\nAttention Lab did not close normally. Its last "
                              "autosave (step %2, in %3) holds training you had not saved.")
                               .arg(QLocale().toString(autosavedAt.toLocalTime(), QLocale::ShortFormat))
                               .arg(settings.value(kAutosaveStepKey).toInt())
                               .arg(native(autosave));
  if (!prompt_(question)) {
    settings.remove(kAutosaveKey);  // declined: not offered again; the next start reopens as usual
    return false;
  }
  LoadedCheckpoint loaded;
  if (const std::string reason = loadCheckpoint(autosave.toStdString(), loaded); !reason.empty()) {
    message = tr("Could not recover %1: %2").arg(native(autosave), QString::fromStdString(reason));
    return false;
  }
  const int steps = loaded.trainer->stepsDone();
  if (const QString refused = files_.adopt(autosave, std::move(loaded)); !refused.isEmpty()) {
    message = tr("Could not recover %1: %2").arg(native(autosave), refused);
    return false;
  }
  files_.markRecovered(settings.value(kAutosaveOfKey).toString());
  message = tr("Recovered the experiment autosaved at step %1 from %2: save it to keep it.").arg(steps).arg(native(autosave));
  return true;
}

}  // namespace attnlab
