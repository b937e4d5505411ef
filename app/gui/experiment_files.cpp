#include "experiment_files.h"

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTimer>
#include <algorithm>

#include "io/checkpoint.h"
#include "io/checkpoint_corpus.h"

namespace attnlab {

namespace {

constexpr int kRecentCount = 8;
const QString kRecentKey = QStringLiteral("files/recent");
const QString kLastFolderKey = QStringLiteral("files/lastFolder");

// A folder name from an experiment name: "Induction heads" -> "induction-heads".
QString folderNameOf(const QString& name) {
  QString out;
  for (const QChar c : name.toLower()) {
    if (c.isLetterOrNumber()) out += c;
    else if (!out.isEmpty() && !out.endsWith(QLatin1Char('-'))) out += QLatin1Char('-');
  }
  while (out.endsWith(QLatin1Char('-'))) out.chop(1);
  return out.isEmpty() ? QStringLiteral("experiment") : out;
}

QString cleanFolder(const QString& dir) { return QDir::cleanPath(QFileInfo(dir).absoluteFilePath()); }

}  // namespace

ExperimentFiles::ExperimentFiles(TrainingSession& session, QWidget* window)
    : QObject(window), session_(session), window_(window), autosaveTimer_(new QTimer(this)) {
  prompt_ = [this](const QString& question) {
    return QMessageBox::question(window_, tr("Unsaved training"), question,
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  };
  locate_ = [this](const QString& missing) {
    QMessageBox box(QMessageBox::Warning, tr("Text file missing"),
                    tr("This experiment learned from %1, which is no longer there (an older version saved the file's "
                       "place, not a copy). Locate it to open the experiment; the next save keeps a copy in the folder.")
                        .arg(missing),
                    QMessageBox::Cancel, window_);
    QPushButton* locate = box.addButton(tr("Locate file\u2026"), QMessageBox::AcceptRole);
    box.exec();
    if (box.clickedButton() != locate) return QString();
    return QFileDialog::getOpenFileName(window_, tr("Locate %1").arg(QFileInfo(missing).fileName()), QFileInfo(missing).path());
  };
  connect(&session_, &TrainingSession::saved, this, &ExperimentFiles::onSaved);
  connect(&session_, &TrainingSession::lossPointsAdded, this, [this](const std::vector<LossPoint>& points) {
    const bool wasUnsaved = hasUnsavedSteps();
    trainedSteps_ = points.back().step;
    if (wasUnsaved != hasUnsavedSteps()) emit documentChanged();
  });
  connect(&session_, &TrainingSession::cleared, this, [this] {
    trainedSteps_ = 0;
    emit documentChanged();
  });
  connect(autosaveTimer_, &QTimer::timeout, this, &ExperimentFiles::autosaveNow);

  QSettings settings;
  Autosave a;
  a.enabled = settings.value(QStringLiteral("autosave/enabled"), a.enabled).toBool();
  a.minutes = settings.value(QStringLiteral("autosave/minutes"), a.minutes).toInt();
  a.folder = settings.value(QStringLiteral("autosave/folder"), defaultAutosaveFolder()).toString();
  useAutosave(a);
}

QStringList ExperimentFiles::recentFolders() const { return QSettings().value(kRecentKey).toStringList(); }

void ExperimentFiles::startedNew(const QString& experimentName) {
  experimentName_ = experimentName;
  currentFolder_.clear();
  savedSteps_ = 0;
  autosavedSteps_ = 0;
  emit startedNewExperiment();
  emit documentChanged();
}

void ExperimentFiles::markRecovered(const QString& saveFolder) {
  currentFolder_ = saveFolder;
  savedSteps_ = -1;
  emit documentChanged();
}

// ---- saving -----------------------------------------------------------------------------------

void ExperimentFiles::save() {
  if (currentFolder_.isEmpty()) saveAs();
  else saveTo(currentFolder_);
}

void ExperimentFiles::saveAs() {
  const QString dir = chooseSaveFolder();
  if (!dir.isEmpty()) saveTo(dir);
}

QString ExperimentFiles::chooseSaveFolder() {
  const QString start = QSettings().value(kLastFolderKey, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  const QString dir = QFileDialog::getSaveFileName(window_, tr("Save Experiment As (a folder)"),
                                                   QDir(start).filePath(folderNameOf(experimentName_)), QString(), nullptr,
                                                   QFileDialog::DontConfirmOverwrite);
  if (!dir.isEmpty()) QSettings().setValue(kLastFolderKey, QFileInfo(dir).path());
  return dir;
}

void ExperimentFiles::saveTo(const QString& dir) {
  if (!session_.hasExperiment()) {
    showProblem(tr("Nothing to save"), tr("There is no trained experiment yet: press Train or Step first."));
    return;
  }
  emit statusMessage(tr("Saving to %1\u2026").arg(dir));
  session_.save(cleanFolder(dir), TrainingSession::SaveKind::User);
}

QString ExperimentFiles::saveAndStop(const QString& dir) {
  if (!session_.hasExperiment()) return tr("there is no trained experiment to save");
  session_.stop();  // the session then saves on this thread, before save() returns
  savingAndStopping_ = true;
  lastError_ = tr("the save did not complete");
  session_.save(cleanFolder(dir), TrainingSession::SaveKind::User);
  savingAndStopping_ = false;
  return lastError_;
}

void ExperimentFiles::onSaved(const QString& dir, int step, const QString& error, TrainingSession::SaveKind kind) {
  if (kind == TrainingSession::SaveKind::Autosave) {
    if (error.isEmpty()) {
      autosavedSteps_ = step;
      emit savedTo(dir, step, kind);
    }
    emit statusMessage(error.isEmpty() ? tr("Autosaved step %1 to %2").arg(step).arg(dir) : tr("Autosave failed: %1").arg(error));
    return;
  }
  lastError_ = error;
  if (!error.isEmpty()) {
    if (!savingAndStopping_) showProblem(tr("Could not save"), error);
    emit statusMessage(tr("Could not save: %1").arg(error));
    return;
  }
  currentFolder_ = dir;
  savedSteps_ = step;
  emit savedTo(dir, step, kind);
  addRecent(dir);
  emit statusMessage(tr("Saved step %1 to %2").arg(step).arg(dir));
  emit documentChanged();
}

// ---- opening ----------------------------------------------------------------------------------

void ExperimentFiles::openWithDialog() {
  const QString start = QSettings().value(kLastFolderKey, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  const QString dir = QFileDialog::getExistingDirectory(window_, tr("Open Experiment (a saved folder)"), start);
  if (dir.isEmpty()) return;
  QSettings().setValue(kLastFolderKey, QFileInfo(dir).path());
  open(dir);
}

QString ExperimentFiles::open(const QString& dir) {
  const QString folder = cleanFolder(dir);
  LoadedCheckpoint loaded;
  if (const std::string why = loadCheckpoint(folder.toStdString(), loaded); !why.empty()) {
    if (const QString missing = QString::fromStdString(missingCorpus(folder.toStdString())); !missing.isEmpty())
      return openLocatingCorpus(folder, missing);
    const QString reason = QString::fromStdString(why);
    showProblem(tr("Could not open the experiment"),
                tr("%1 is not an experiment this version can open:\n\n%2\n\nThe current experiment is unchanged.").arg(folder, reason));
    emit statusMessage(tr("Could not open %1: %2").arg(folder, reason));
    return reason;
  }
  return adopt(folder, std::move(loaded));
}

// A checkpoint of an older version names its text file by an absolute path, and the file moved.
QString ExperimentFiles::openLocatingCorpus(const QString& folder, const QString& missing) {
  const QString chosen = locate_(missing);
  if (chosen.isEmpty()) {
    const QString reason = tr("its text file %1 is missing").arg(missing);
    emit statusMessage(tr("Could not open %1: %2").arg(folder, reason));
    return reason;
  }
  LoadedCheckpoint loaded;
  if (const std::string why = loadCheckpointOnText(folder.toStdString(), chosen.toStdString(), loaded); !why.empty()) {
    const QString reason = QString::fromStdString(why);
    showProblem(tr("Could not open the experiment"),
                tr("%1 does not open with %2:\n\n%3\n\nThe current experiment is unchanged.").arg(folder, chosen, reason));
    return reason;
  }
  const QString opened = adopt(folder, std::move(loaded));
  if (opened.isEmpty()) emit statusMessage(tr("Opened %1 with the text file %2; save it to keep a copy of the text in the folder").arg(folder, chosen));
  return opened;
}

QString ExperimentFiles::adopt(const QString& dir, LoadedCheckpoint loaded) {
  const QString folder = cleanFolder(dir);
  if (!confirmDiscard(tr("opening %1").arg(QFileInfo(folder).fileName()))) return tr("cancelled");
  const int steps = loaded.trainer->stepsDone();
  session_.open(std::move(loaded.trainer));
  experimentName_ = QString::fromStdString(loaded.config.name);
  currentFolder_ = folder;
  savedSteps_ = steps;
  autosavedSteps_ = steps;
  trainedSteps_ = steps;
  addRecent(folder);
  emit opened(loaded.config, folder);
  emit statusMessage(loaded.notice.empty() ? tr("Opened %1 at step %2").arg(folder).arg(steps)
                                          : tr("Opened %1 at step %2; %3").arg(folder).arg(steps).arg(QString::fromStdString(loaded.notice)));
  emit documentChanged();
  return {};
}

bool ExperimentFiles::confirmDiscard(const QString& action) {
  if (!hasUnsavedSteps()) return true;
  const QString question = tr("The experiment has %1 trained steps that are not saved.\nSave them before %2?")
                               .arg(trainedSteps_)
                               .arg(action);
  switch (prompt_(question)) {
    case QMessageBox::Discard: return true;
    case QMessageBox::Save: {
      const QString dir = currentFolder_.isEmpty() ? chooseSaveFolder() : currentFolder_;
      if (dir.isEmpty()) return false;
      if (const QString why = saveAndStop(dir); !why.isEmpty()) {
        showProblem(tr("Could not save"), why);
        return false;
      }
      return true;
    }
    default: return false;
  }
}

void ExperimentFiles::addRecent(const QString& dir) {
  QStringList recent = recentFolders();
  recent.removeAll(dir);
  recent.prepend(dir);
  while (recent.size() > kRecentCount) recent.removeLast();
  QSettings().setValue(kRecentKey, recent);
  emit documentChanged();
}

void ExperimentFiles::showProblem(const QString& title, const QString& text) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, window_);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, not exec(): training and the views go on behind it
}

// ---- autosave ---------------------------------------------------------------------------------

QString ExperimentFiles::defaultAutosaveFolder() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("autosave"));
}

QString ExperimentFiles::autosaveFolderFor(const QString& name) const { return QDir(autosave_.folder).filePath(folderNameOf(name)); }

void ExperimentFiles::setAutosave(const Autosave& settings) {
  useAutosave(settings);
  QSettings s;
  s.setValue(QStringLiteral("autosave/enabled"), autosave_.enabled);
  s.setValue(QStringLiteral("autosave/minutes"), autosave_.minutes);
  s.setValue(QStringLiteral("autosave/folder"), autosave_.folder);
}

void ExperimentFiles::useAutosave(const Autosave& settings) {
  autosave_ = settings;
  autosave_.minutes = std::clamp(autosave_.minutes, 1, 24 * 60);
  if (autosave_.folder.isEmpty()) autosave_.folder = defaultAutosaveFolder();
  autosaveTimer_->stop();
  if (autosave_.enabled) autosaveTimer_->start(autosave_.minutes * 60 * 1000);
}

void ExperimentFiles::autosaveNow() {
  using State = TrainingSession::State;
  const State state = session_.state();
  if ((state != State::Running && state != State::Paused) || trainedSteps_ <= autosavedSteps_) return;
  session_.save(autosaveFolderFor(experimentName_), TrainingSession::SaveKind::Autosave);
}

void ExperimentFiles::editAutosave() {
  QDialog dialog(window_);
  dialog.setWindowTitle(tr("Autosave"));
  auto* form = new QFormLayout(&dialog);
  auto* enabled = new QCheckBox(tr("Save the experiment while it trains"), &dialog);
  enabled->setChecked(autosave_.enabled);
  auto* minutes = new QSpinBox(&dialog);
  minutes->setRange(1, 24 * 60);
  minutes->setSuffix(tr(" min"));
  minutes->setValue(autosave_.minutes);
  auto* folder = new QLineEdit(autosave_.folder, &dialog);
  folder->setMinimumWidth(360);
  auto* browse = new QPushButton(tr("Browse\u2026"), &dialog);
  connect(browse, &QPushButton::clicked, &dialog, [&] {
    const QString dir = QFileDialog::getExistingDirectory(&dialog, tr("Autosave Folder"), folder->text());
    if (!dir.isEmpty()) folder->setText(dir);
  });
  auto* folderRow = new QHBoxLayout;
  folderRow->addWidget(folder, 1);
  folderRow->addWidget(browse);
  form->addRow(enabled);
  form->addRow(tr("Every"), minutes);
  form->addRow(tr("Folder"), folderRow);
  auto* note = new QLabel(tr("Each experiment is kept in a folder of its own name there, replaced at every autosave."), &dialog);
  note->setWordWrap(true);
  form->addRow(note);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return;
  setAutosave({enabled->isChecked(), minutes->value(), folder->text().trimmed()});
}

}  // namespace attnlab
