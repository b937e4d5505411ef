#include "finished_run_dialog.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

namespace attnlab {

FinishedRunChoice askAboutFinishedRun(QWidget* parent, int stepsDone) {
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("The run has finished"));
  auto* layout = new QVBoxLayout(&dialog);
  auto* text = new QLabel(QObject::tr("This run has done all its %1 steps. Train it further, or start over from step 0 "
                                      "with fresh weights?\n\nThe further steps train at the learning rate where the "
                                      "schedule ends (lr \u00d7 min_lr_ratio); the steps done keep theirs.")
                              .arg(stepsDone),
                          &dialog);
  text->setWordWrap(true);
  layout->addWidget(text);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(QObject::tr("Continue for"), &dialog));
  auto* more = new QSpinBox(&dialog);
  more->setObjectName(QStringLiteral("moreSteps"));
  more->setRange(1, 10'000'000);
  more->setValue(std::max(1, stepsDone));
  more->setSuffix(QObject::tr(" more steps"));
  row->addWidget(more, 1);
  layout->addLayout(row);

  auto* buttons = new QDialogButtonBox(&dialog);
  QPushButton* continueButton = buttons->addButton(QObject::tr("Continue"), QDialogButtonBox::AcceptRole);
  QPushButton* startOver = buttons->addButton(QObject::tr("Start over"), QDialogButtonBox::DestructiveRole);
  buttons->addButton(QDialogButtonBox::Cancel);
  continueButton->setDefault(true);
  FinishedRunChoice choice;
  QObject::connect(continueButton, &QPushButton::clicked, &dialog, [&] {
    choice = {FinishedRunChoice::Action::Continue, more->value()};
    dialog.accept();
  });
  QObject::connect(startOver, &QPushButton::clicked, &dialog, [&] {
    choice.action = FinishedRunChoice::Action::StartOver;
    dialog.accept();
  });
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  layout->addWidget(buttons);
  dialog.exec();
  return choice;
}

}  // namespace attnlab
