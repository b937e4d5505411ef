#include "new_comparison_dialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "io/config_json.h"

namespace attnlab {

NewComparisonDialog::NewComparisonDialog(const ExperimentConfig& current, QWidget* parent)
    : QDialog(parent), list_(new QListWidget(this)), hint_(new QLabel(this)),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)) {
  setWindowTitle(tr("New comparison"));
  auto add = [this](const ExperimentConfig& config, const QString& text, bool ticked) {
    configs_.push_back(config);
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
  layout->addWidget(new QLabel(tr("Tick two to four experiments to train and show side by side."), this));
  layout->addWidget(list_, 1);
  layout->addWidget(hint_);
  layout->addWidget(buttons_);
  connect(list_, &QListWidget::itemChanged, this, &NewComparisonDialog::updateButtons);
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  resize(460, 420);
  updateButtons();
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
  hint_->setText(ok ? tr("%1 experiments chosen.").arg(n) : tr("%1 chosen: choose two to four.").arg(n));
}

}  // namespace attnlab
