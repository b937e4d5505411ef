#include "fine_tune_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace attnlab {

FineTuneDialog::FineTuneDialog(const QString& modelName, bool saving, int defaultSteps, QWidget* parent)
    : QDialog(parent), saving_(saving) {
  setObjectName(QStringLiteral("fineTuneDialog"));
  setWindowTitle(saving ? tr("Save as Lab Checkpoint") : tr("Fine-tune"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(saving ? tr("<b>%1</b> is saved as a lab checkpoint, which trains on a text. Which text?").arg(modelName)
                                  : tr("Fine-tune <b>%1</b> on a text, read with the model's own tokenizer.").arg(modelName));
  intro->setWordWrap(true);
  layout->addWidget(intro);

  probe_ = new QRadioButton(tr("The probe text (repeated to fill the training windows)"));
  probe_->setObjectName(QStringLiteral("fineTuneProbe"));
  file_ = new QRadioButton(tr("A text file:"));
  file_->setObjectName(QStringLiteral("fineTuneFile"));
  probe_->setChecked(true);
  path_ = new QLineEdit;
  path_->setObjectName(QStringLiteral("fineTunePath"));
  path_->setPlaceholderText(tr("a UTF-8 text file"));
  auto* browseButton = new QPushButton(tr("Browse\u2026"));
  connect(browseButton, &QPushButton::clicked, this, &FineTuneDialog::browse);
  auto* fileRow = new QHBoxLayout;
  fileRow->addWidget(file_);
  fileRow->addWidget(path_, 1);
  fileRow->addWidget(browseButton);
  layout->addWidget(probe_);
  layout->addLayout(fileRow);

  steps_ = new QSpinBox;
  steps_->setObjectName(QStringLiteral("fineTuneSteps"));
  steps_->setRange(1, 1000000);
  steps_->setValue(defaultSteps);
  if (!saving) {
    auto* form = new QFormLayout;
    form->addRow(tr("Steps (batches of 4 x up to 128 tokens, learning rate 1e-4):"), steps_);
    layout->addLayout(form);
  } else {
    steps_->hide();
  }

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
  auto* ok = buttons->addButton(saving ? tr("Save\u2026") : tr("Fine-tune"), QDialogButtonBox::AcceptRole);
  ok->setObjectName(QStringLiteral("fineTuneOk"));
  okButton_ = ok;
  if (!saving) {
    auto* panel = buttons->addButton(tr("Train the Panel's Experiment Instead"), QDialogButtonBox::ActionRole);
    panel->setObjectName(QStringLiteral("fineTunePanelInstead"));
    connect(panel, &QPushButton::clicked, this, [this] { done(kTrainPanel); });
  }
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  connect(probe_, &QRadioButton::toggled, this, &FineTuneDialog::updateOk);
  connect(path_, &QLineEdit::textChanged, this, [this] {
    if (!path_->text().isEmpty()) file_->setChecked(true);
    updateOk();
  });
  updateOk();
}

FineTuneChoice FineTuneDialog::choice() const {
  return {probe_->isChecked(), path_->text(), saving_ ? 0 : steps_->value()};
}

void FineTuneDialog::browse() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Text to fine-tune on"), QString(), tr("Text files (*.txt *.md);;All files (*)"));
  if (!file.isEmpty()) path_->setText(file);
}

void FineTuneDialog::updateOk() {
  okButton_->setEnabled(probe_->isChecked() || QFileInfo(path_->text()).isFile());
}

}  // namespace attnlab
