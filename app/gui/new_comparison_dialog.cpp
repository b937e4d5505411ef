#include "new_comparison_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>

#include "hf/hf_cache.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "open_model_dialog.h"

namespace attnlab {

NewComparisonDialog::NewComparisonDialog(const ExperimentConfig& current, QWidget* parent)
    : QDialog(parent), list_(new QListWidget(this)), hint_(new QLabel(this)),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
  setWindowTitle(tr("New comparison"));
  auto add = [this](const ExperimentConfig& config, const QString& text, bool ticked) {
    configs_.push_back(config);
    folders_ << QString();
    trainers_.emplace_back();
    auto* item = new QListWidgetItem(text, list_);
    item->setToolTip(QString::fromStdString(config.description));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
  };
  add(current, tr("The current experiment: %1").arg(QString::fromStdString(current.name)), true);
  for (const std::string& name : presetNames()) {
    ExperimentConfig preset;
    if (!loadPreset(name, preset).empty()) continue;
    add(preset, tr("Preset: %1").arg(QString::fromStdString(preset.name)), false);
  }
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("Tick two to four: experiments to train, saved experiments to continue or model folders to open, shown side by side."), this));
  layout->addWidget(list_, 1);
  auto* addFolder = new QPushButton(tr("Add Model Folder\u2026"), this);
  addFolder->setToolTip(tr("A Hugging Face model folder (config.json, model.safetensors, the tokenizer): shown, not trained"));
  connect(addFolder, &QPushButton::clicked, this, [this] {
    OpenModelDialog dialog(QString::fromStdString(hf::hfCacheRoot()), this);
    if (dialog.exec() == QDialog::Accepted && !dialog.chosenFolder().isEmpty()) addModelFolder(dialog.chosenFolder());
  });
  auto* addSaved = new QPushButton(tr("Add Saved Experiment\u2026"), this);
  addSaved->setToolTip(tr("A folder saved with File > Save Experiment (or by attnlab-cli train): shown with its trained weights"));
  connect(addSaved, &QPushButton::clicked, this, &NewComparisonDialog::addSavedWithDialog);
  auto* adders = new QHBoxLayout;
  adders->addWidget(addSaved);
  adders->addWidget(addFolder);
  adders->addStretch(1);
  layout->addLayout(adders);
  layout->addWidget(hint_);
  layout->addWidget(buttons_);
  connect(list_, &QListWidget::itemChanged, this, &NewComparisonDialog::updateButtons);
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  resize(460, 420);
  updateButtons();
}

void NewComparisonDialog::addModelFolder(const QString& dir) {
  ExperimentConfig standIn;  // names the pane until the model is open; never trained
  standIn.name = QDir(dir).dirName().toStdString();
  configs_.push_back(standIn);
  folders_ << dir;
  trainers_.emplace_back();
  auto* item = new QListWidgetItem(tr("Model folder: %1").arg(QDir(dir).dirName()), list_);
  item->setToolTip(QDir::toNativeSeparators(dir));
  item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
  item->setCheckState(Qt::Checked);
  updateButtons();
}

QString NewComparisonDialog::addSavedExperiment(const QString& dir) {
  const QString folder = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
  LoadedCheckpoint loaded;
  if (const std::string why = loadCheckpoint(folder.toStdString(), loaded); !why.empty()) return QString::fromStdString(why);
  const int step = loaded.trainer->stepsDone();
  QString tip = QDir::toNativeSeparators(folder);
  if (!loaded.notice.empty()) tip += QStringLiteral("\n") + QString::fromStdString(loaded.notice);
  const QString name = QString::fromStdString(loaded.config.name);
  configs_.push_back(loaded.config);
  folders_ << QString();
  trainers_.push_back(std::move(loaded.trainer));
  auto* item = new QListWidgetItem(tr("Saved experiment: %1 (%2, step %3)").arg(QDir(folder).dirName(), name).arg(step), list_);
  item->setToolTip(tip);
  item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
  item->setCheckState(Qt::Checked);
  updateButtons();
  return QString();
}

void NewComparisonDialog::addSavedWithDialog() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a saved experiment (a saved folder)"));
  if (dir.isEmpty()) return;
  if (const QString why = addSavedExperiment(dir); !why.isEmpty())
    QMessageBox::warning(this, tr("Could not add the experiment"),
                         tr("%1 is not an experiment this version can open:\n\n%2\n\nThe list is unchanged.")
                             .arg(QDir::toNativeSeparators(dir), why));
}

std::vector<std::unique_ptr<Trainer>> NewComparisonDialog::takeChosenTrainers() {
  std::vector<std::unique_ptr<Trainer>> out;
  for (int i = 0; i < list_->count(); ++i)
    if (list_->item(i)->checkState() == Qt::Checked) out.push_back(std::move(trainers_[i]));
  return out;
}

QStringList NewComparisonDialog::chosenFolders() const {
  QStringList out;
  for (int i = 0; i < list_->count(); ++i)
    if (list_->item(i)->checkState() == Qt::Checked) out << folders_[i];
  return out;
}

std::vector<ExperimentConfig> NewComparisonDialog::chosen() const {
  std::vector<ExperimentConfig> out;
  for (int i = 0; i < list_->count(); ++i)
    if (list_->item(i)->checkState() == Qt::Checked) out.push_back(configs_[i]);
  return out;
}

void NewComparisonDialog::updateButtons() {
  const int n = static_cast<int>(chosen().size());
  const bool ok = n >= 2 && n <= 4;
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(ok);
  hint_->setText(ok ? tr("%1 runs chosen.").arg(n) : tr("%1 chosen: choose two to four.").arg(n));
}

}  // namespace attnlab
