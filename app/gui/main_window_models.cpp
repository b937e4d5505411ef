// MainWindow's part in opening a Hugging Face model (model_opener.h does the loading): the
// session shows the opened model in every view; the experiment panel keeps the experiment that
// Train would build. Train and Save on an opened model fine-tune it (model_fine_tuner.h).
#include <QDir>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>

#include "attention_map_model.h"
#include "experiment_files.h"
#include "experiment_panel.h"
#include "loss_history_model.h"
#include "hf/hf_cache.h"
#include "main_window.h"
#include "model_fine_tuner.h"
#include "model_opener.h"
#include "open_model_dialog.h"

namespace attnlab {

void MainWindow::openModelWithDialog() {
  OpenModelDialog dialog(QString::fromStdString(hf::hfCacheRoot()), this);
  if (dialog.exec() != QDialog::Accepted || dialog.chosenFolder().isEmpty()) return;
  openModelFolder(dialog.chosenFolder());
}

void MainWindow::openModelFolder(const QString& dir) {
  statusBar()->showMessage(tr("Opening %1\u2026").arg(QDir::toNativeSeparators(dir)));
  opener_->open(dir);
}

void MainWindow::captureWhenOpened(const QString& file, const QString& exportFile) {
  capture_ = {0, file, exportFile, true};
}

void MainWindow::showOpenedModel(const std::shared_ptr<OpenedHfModel>& opened) {
  if (!files_->confirmDiscard(tr("opening a model"))) return;
  const QString description = ModelOpener::describe(*opened);
  fineTuner_->remember(*opened);
  session_->openModel(std::move(opened->model), opened->vocabulary, opened->probe, ModelOpener::name(*opened).toStdString());
  files_->startedNew(QDir(QString::fromStdString(opened->info.dir)).dirName());
  experimentLabel_->setText(description);
  experimentLabel_->setToolTip(QDir::toNativeSeparators(QString::fromStdString(opened->info.dir)));
  setWindowTitle(tr("%1 \u2014 Attention Lab").arg(description.section(QStringLiteral(" \u00b7 "), 0, 0)));
  progress_->setFormat(tr("opened model: no training"));
  panel_->hide();  // it holds the experiment Train would build, not the opened model (View menu shows it again)
  connect(session_, &TrainingSession::tracing, this, &MainWindow::showTracing, Qt::UniqueConnection);
  connect(session_, &TrainingSession::traced, this, &MainWindow::tracingDone, Qt::UniqueConnection);
  statusBar()->showMessage(tr("Opened. Edit the probe above the views."), 10000);
}

void MainWindow::showTracing(int tokens) {
  if (!session_->hasOpenedModel()) return;
  progress_->setRange(0, 0);  // busy
  progress_->setFormat(tr("tracing %1 tokens\u2026").arg(tokens));
  statusBar()->showMessage(tr("Tracing the probe (%1 tokens) on the worker\u2026").arg(tokens));
}

void MainWindow::tracingDone() {
  if (!session_->hasOpenedModel() || progress_->maximum() != 0) return;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(tr("opened model: no training"));
  statusBar()->clearMessage();
}

void MainWindow::connectFineTuner() {
  fineTuner_ = new ModelFineTuner(*session_, [this] {
    const auto snapshot = attention_->snapshot();
    return snapshot ? snapshot->trace.tokens : std::vector<int>{};
  }, this);
  connect(fineTuner_, &ModelFineTuner::started, this, &MainWindow::showFineTuning);
  connect(fineTuner_, &ModelFineTuner::readyToSave, files_, &ExperimentFiles::saveAs);
  connect(fineTuner_, &ModelFineTuner::refused, this, [this](const QString& message) {
    statusBar()->showMessage(message);
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Fine-tune"), tr("The model cannot be fine-tuned on that text."),
                                QMessageBox::Ok, this);
    box->setInformativeText(message);
    box->setObjectName(QStringLiteral("fineTuneRefusal"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
}

// The fine-tuning experiment is the one on display now: Save writes it, Reset would start it afresh.
void MainWindow::showFineTuning(const ExperimentConfig& config) {
  config_ = config;
  flopsPerStep_ = 0;
  panel_->setAppliedConfig(config_);
  history_->setPlan(config_.train.steps, config_.model.n_layers);
  files_->startedNew(QString::fromStdString(config_.name));
  presetName_.clear();
  statusBar()->showMessage(config.train.steps > 0 ? tr("Fine-tuning for %1 steps on %2").arg(config.train.steps).arg(
                                                        QDir::toNativeSeparators(QString::fromStdString(config.task.text_path)))
                                                  : tr("Choose the checkpoint folder"),
                           8000);
}

void MainWindow::saveExperiment(bool askFolder) {
  if (session_->hasOpenedModel()) return fineTuner_->save();
  askFolder ? files_->saveAs() : files_->save();
}

void MainWindow::refuseModel(const QString& dir, const QString& message) {
  statusBar()->showMessage(message);
  if (capture_.whenOpened) {
    capture_.whenOpened = false;
    emit captureFinished(false, message);
    return;
  }
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Open Model"),
                              dir.isEmpty() ? message : tr("Could not open %1").arg(QDir::toNativeSeparators(dir)), QMessageBox::Ok,
                              this);
  if (!dir.isEmpty()) box->setInformativeText(message);
  box->setObjectName(QStringLiteral("openModelRefusal"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

}  // namespace attnlab
