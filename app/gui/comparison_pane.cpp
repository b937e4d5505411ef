#include "comparison_pane.h"

#include <QDir>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>
#include <cmath>

#include "attention_map_model.h"
#include "head_selection.h"
#include "io/checkpoint.h"
#include "loss_history_model.h"
#include "model_opener.h"
#include "run_folder_watcher.h"
#include "train/trainer.h"
#include "view_kind.h"

namespace attnlab {

ComparisonPane::ComparisonPane(int index, const ExperimentConfig& config, QWidget* parent)
    : QFrame(parent),
      index_(index),
      config_(config),
      session_(new TrainingSession(this)),
      history_(new LossHistoryModel(this)),
      attention_(new AttentionMapModel(this)),
      selection_(new HeadSelection(attention_, this)),
      header_(new QLabel(this)),
      note_(new QLabel(this)),
      layout_(new QVBoxLayout(this)),
      viewArea_(new QScrollArea(this)) {
  setObjectName(QStringLiteral("comparisonPane%1").arg(index + 1));
  setFrameShape(QFrame::StyledPanel);
  layout_->setContentsMargins(4, 4, 4, 4);
  layout_->setSpacing(2);
  header_->setTextFormat(Qt::RichText);
  header_->setToolTip(QString::fromStdString(config_.description));
  note_->setStyleSheet(QStringLiteral("color: #a05a00;"));
  note_->setWordWrap(true);
  note_->hide();
  layout_->addWidget(header_);
  layout_->addWidget(note_);
  // Views shrink with the pane; one that cannot (a large minimum size) scrolls instead of
  // widening the window past the screen.
  viewArea_->setWidgetResizable(true);
  viewArea_->setFrameShape(QFrame::NoFrame);
  layout_->addWidget(viewArea_, 1);
  history_->setPlan(config_.train.steps, config_.model.n_layers);

  connect(session_, &TrainingSession::cleared, this, [this] {
    history_->clear();
    attention_->clear();
    progress_ = {};
    hasProgress_ = false;
    tracedStep_ = -1;
    updateHeader();
  });
  connect(session_, &TrainingSession::lossPointsAdded, history_, &LossHistoryModel::append);
  connect(session_, &TrainingSession::progressed, this, [this](const ProgressSnapshot& p) {
    progress_ = p;
    hasProgress_ = true;
    updateHeader();
    emit progressed(index_, p);
  });
  connect(session_, &TrainingSession::traced, this, [this](const std::shared_ptr<const TraceSnapshot>& trace) {
    attention_->setTrace(trace);
    tracedStep_ = trace->step;
    emit traced(index_, trace);
  });
  connect(session_, &TrainingSession::failed, this, [this](const QString& message) {
    error_ = message;
    updateHeader();
  });
  connect(session_, &TrainingSession::stateChanged, this, [this](TrainingSession::State state) {
    if (state != TrainingSession::State::Failed) error_.clear();
    updateHeader();
    emit stateChanged(index_, state);
  });
  updateHeader();
}

QString ComparisonPane::runName() const { return QStringLiteral("%1 \u00b7 %2").arg(index_ + 1).arg(QString::fromStdString(config_.name)); }

void ComparisonPane::start() {
  waiting_ = false;
  if (!watching() && folder_.isEmpty()) session_->start(config_);
}

void ComparisonPane::openModelFolder(const QString& dir) {
  folder_ = dir;
  config_.name = QDir(dir).dirName().toStdString();
  if (!opener_) {
    opener_ = new ModelOpener(this);
    connect(opener_, &ModelOpener::opened, this, [this](const std::shared_ptr<OpenedHfModel>& opened) {
      const QString name = ModelOpener::name(*opened);
      config_.name = name.toStdString();
      const ModelConfig& c = opened->info.config;
      modelSummary_ = tr("%1, %2 layers × %3 heads, d_model %4").arg(QString::fromStdString(opened->info.model_type)).arg(c.n_layers).arg(c.n_heads).arg(c.d_model);
      error_.clear();
      session_->openModel(std::move(opened->model), opened->vocabulary, opened->probe, name.toStdString());
    });
    connect(opener_, &ModelOpener::refused, this, [this](const QString&, const QString& message) {
      error_ = message;
      updateHeader();
    });
  }
  modelSummary_ = tr("opening…");
  updateHeader();
  opener_->open(dir);
}

QString ComparisonPane::watch(const QString& dir) {
  stopWatching();
  RunFolderWatcher::Target target;
  target.hasOwnSteps = [] { return false; };  // Train all skips a watched pane: it never trains here
  target.adopt = [this](const QString&, LoadedCheckpoint&& loaded) {
    config_ = loaded.config;
    history_->setPlan(config_.train.steps, config_.model.n_layers);
    const int steps = loaded.trainer->stepsDone();
    session_->open(std::move(loaded.trainer));
    emit watchedCheckpointOpened(index_, steps);
    return QString();
  };
  watcher_ = new RunFolderWatcher(std::move(target), this);
  connect(watcher_, &RunFolderWatcher::statusMessage, this, [this](const QString& text) {
    watchStatus_ = text;
    updateHeader();
  });
  const QString why = watcher_->watch(dir);
  if (!why.isEmpty()) stopWatching();
  updateHeader();
  return why;
}

void ComparisonPane::stopWatching() {
  if (!watcher_) return;
  watcher_->stop();
  watcher_->deleteLater();
  watcher_ = nullptr;
  watchStatus_.clear();
  updateHeader();
}

bool ComparisonPane::watching() const { return watcher_ && watcher_->watching(); }

QString ComparisonPane::watchedFolder() const { return watching() ? watcher_->checkpointFolder() : QString(); }

void ComparisonPane::setWaiting(bool waiting) {
  waiting_ = waiting;
  updateHeader();
}

QString ComparisonPane::shortName() const {
  QStringList variants;
  for (const std::string& v : config_.model.attention) variants << QString::fromStdString(v);
  return QStringLiteral("%1: %2%3").arg(index_ + 1).arg(variants.join(QLatin1Char('/')), config_.model.retention_gate ? tr("+gate") : QString());
}

void ComparisonPane::setViewKind(int kind) {
  delete viewArea_->takeWidget();
  view_ = viewKinds().at(kind).make(ViewContext{attention_, selection_, session_, history_, true, colourScale_, kvLink_, lengths_, index_}, nullptr);
  viewArea_->setWidget(view_.widget);
}

void ComparisonPane::setNote(const QString& note) {
  note_->setText(note);
  note_->setVisible(!note.isEmpty());
}

QString ComparisonPane::headerText() const { return header_->text(); }

void ComparisonPane::updateHeader() {
  QStringList variants;
  for (const std::string& v : config_.model.attention) variants << QString::fromStdString(v);
  QString gates;
  if (config_.model.retention_gate) gates += tr(", retention gate");
  if (config_.model.output_gate != "none") gates += tr(", output gate");
  if (config_.model.value_gate) gates += tr(", value gate");
  QString status = waiting_ && session_->state() == TrainingSession::State::Idle ? tr("Waiting: trains when the runs before it are done")
                   : watching()                                                 ? tr("Watched run (trains elsewhere)")
                                                                                : TrainingSession::stateName(session_->state());
  if (hasProgress_) {
    status += tr(" \u00b7 step %1 / %2 \u00b7 loss %3").arg(progress_.step).arg(progress_.total_steps).arg(progress_.loss, 0, 'f', 3);
    if (std::isfinite(progress_.accuracy)) status += tr(" \u00b7 accuracy %1%").arg(100 * progress_.accuracy, 0, 'f', 1);
  }
  if (!error_.isEmpty()) status = QStringLiteral("<span style='color:#c0392b'>%1</span>").arg(error_.toHtmlEscaped());
  if (watching())  // what the watcher last said (the step on display, or why a checkpoint was not read)
    status += QStringLiteral("<br><span style='color:#1f6feb'>%1</span>").arg(watchStatus_.toHtmlEscaped());
  if (!folder_.isEmpty()) {
    header_->setText(tr("<b>%1</b> <span style='color:#666'>(%2)</span><br>%3")
                         .arg(runName().toHtmlEscaped(), modelSummary_.toHtmlEscaped(),
                              error_.isEmpty() ? tr("opened model: not trained here") : status));
    header_->setToolTip(QDir::toNativeSeparators(folder_));
    return;
  }
  header_->setText(tr("<b>%1</b> <span style='color:#666'>(%2 attention%3)</span><br>%4")
                       .arg(runName().toHtmlEscaped(), variants.join(QLatin1Char('/')).toHtmlEscaped(), gates, status));
}

}  // namespace attnlab
