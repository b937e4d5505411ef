#include "main_window.h"

#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "attention_panel.h"
#include "loss_chart_view.h"
#include "loss_history_model.h"

namespace attnlab {

namespace {

// Time for layouts and the chart's scene to settle after the last update before a capture.
constexpr int kCaptureSettleMs = 150;

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("--:--");
  const long total = std::lround(seconds);
  const QString minutesSeconds =
      QStringLiteral("%1:%2").arg((total / 60) % 60, 2, 10, QLatin1Char('0')).arg(total % 60, 2, 10, QLatin1Char('0'));
  return total >= 3600 ? QStringLiteral("%1:%2").arg(total / 3600).arg(minutesSeconds) : minutesSeconds;
}

QString formatRate(double perSecond) {
  if (perSecond >= 10000) return QStringLiteral("%1k").arg(perSecond / 1000, 0, 'f', 1);
  return QString::number(perSecond, 'f', perSecond >= 100 ? 0 : 1);
}

QString describe(const ExperimentConfig& c) {
  QStringList variants;
  for (const std::string& v : c.model.attention) variants << QString::fromStdString(v);
  return QObject::tr("%1 \u00b7 task %2 \u00b7 %3 layers \u00d7 %4 heads \u00b7 d_model %5 \u00b7 context %6 \u00b7 %7 attention, %8 positions")
      .arg(QString::fromStdString(c.name), QString::fromStdString(c.task.name))
      .arg(c.model.n_layers)
      .arg(c.model.n_heads)
      .arg(c.model.d_model)
      .arg(c.model.context)
      .arg(variants.join(QLatin1Char('/')), QString::fromStdString(c.model.positional));
}

}  // namespace

MainWindow::MainWindow(const ExperimentConfig& config, const QString& presetName, QWidget* parent)
    : QMainWindow(parent),
      config_(config),
      presetName_(presetName),
      session_(new TrainingSession(this)),
      history_(new LossHistoryModel(this)),
      attention_(new AttentionMapModel(this)) {
  setWindowTitle(tr("Attention Lab"));
  buildActions();
  buildCentralArea();
  buildStatusBar();
  resize(1400, 800);

  connect(session_, &TrainingSession::stateChanged, this, &MainWindow::showState);
  connect(session_, &TrainingSession::cleared, this, &MainWindow::clearResults);
  connect(session_, &TrainingSession::lossPointsAdded, history_, &LossHistoryModel::append);
  connect(session_, &TrainingSession::progressed, this, &MainWindow::showProgress);
  connect(session_, &TrainingSession::traced, this, &MainWindow::showTrace);
  connect(session_, &TrainingSession::failed, this, &MainWindow::showError);
  connect(session_, &TrainingSession::pausedAt, this, [this](int step) {
    if (session_->state() == TrainingSession::State::Paused) statusBar()->showMessage(tr("Paused at step %1").arg(step));
  });
  clearResults();
  showState(session_->state());
}

void MainWindow::buildActions() {
  startPauseAction_ = new QAction(this);
  connect(startPauseAction_, &QAction::triggered, this, &MainWindow::startOrPause);
  resetAction_ = new QAction(style()->standardIcon(QStyle::SP_BrowserReload), tr("Reset"), this);
  resetAction_->setToolTip(tr("Stop training and clear the results"));
  connect(resetAction_, &QAction::triggered, session_, &TrainingSession::reset);
  auto* quit = new QAction(tr("Quit"), this);
  quit->setShortcut(QKeySequence::Quit);
  connect(quit, &QAction::triggered, this, &QWidget::close);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(quit);
  QMenu* training = menuBar()->addMenu(tr("&Training"));
  training->addAction(startPauseAction_);
  training->addAction(resetAction_);

  progress_ = new QProgressBar(this);
  progress_->setMinimumWidth(520);
  progress_->setTextVisible(true);
  progress_->setAlignment(Qt::AlignCenter);
  lossLabel_ = new QLabel(this);
  lossLabel_->setMinimumWidth(300);
  lossLabel_->setContentsMargins(12, 0, 0, 0);

  QToolBar* bar = addToolBar(tr("Training"));
  bar->setObjectName(QStringLiteral("trainingToolBar"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  bar->addAction(startPauseAction_);
  bar->addAction(resetAction_);
  bar->addSeparator();
  bar->addWidget(progress_);
  bar->addWidget(lossLabel_);
}

void MainWindow::buildCentralArea() {
  chart_ = new LossChartView(history_, this);
  attentionPanel_ = new AttentionPanel(attention_, this);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(chart_);
  split->addWidget(attentionPanel_);
  // The heatmap is square and limited by the height; the chart gets the rest of the width.
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setSizes({2000, 3000});
  split->setChildrenCollapsible(false);
  split->setContentsMargins(6, 6, 6, 6);
  setCentralWidget(split);
}

void MainWindow::buildStatusBar() {
  auto* experiment = new QLabel(describe(config_), this);
  experiment->setToolTip(tr("Preset \u201c%1\u201d: %2").arg(presetName_, QString::fromStdString(config_.description)));
  statusBar()->addPermanentWidget(experiment);
}

void MainWindow::startTraining() { session_->start(config_); }

void MainWindow::captureAfterSteps(int steps, const QString& file) {
  capture_ = {std::min(steps, config_.train.steps), file};
  session_->setPauseAtStep(steps);
}

void MainWindow::startOrPause() {
  switch (session_->state()) {
    case TrainingSession::State::Running: session_->pause(); break;
    case TrainingSession::State::Paused: session_->resume(); break;
    default: startTraining(); break;
  }
}

void MainWindow::showState(TrainingSession::State state) {
  using State = TrainingSession::State;
  const bool running = state == State::Running;
  startPauseAction_->setText(running ? tr("Pause") : state == State::Paused ? tr("Resume") : tr("Start"));
  startPauseAction_->setIcon(style()->standardIcon(running ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  startPauseAction_->setToolTip(running ? tr("Pause training after the current step")
                                        : state == State::Paused ? tr("Continue training")
                                                                 : tr("Train the experiment from scratch"));
  resetAction_->setEnabled(state != State::Idle);
  if (state != State::Failed) statusBar()->showMessage(TrainingSession::stateName(state));
}

void MainWindow::showProgress(const ProgressSnapshot& p) {
  progress_->setRange(0, p.total_steps);
  progress_->setValue(p.step);
  progress_->setFormat(tr("step %1 / %2 \u00b7 %3 steps/s \u00b7 %4 tokens/s \u00b7 %5 left")
                           .arg(p.step)
                           .arg(p.total_steps)
                           .arg(formatRate(p.steps_per_second), formatRate(p.tokens_per_second),
                                formatDuration(p.seconds_left)));
  QString text = tr("loss %1").arg(p.loss, 0, 'f', 3);
  if (std::isfinite(p.val_loss)) text += tr("  \u00b7  validation %1").arg(p.val_loss, 0, 'f', 3);
  if (std::isfinite(p.accuracy)) text += tr("  \u00b7  accuracy %1%").arg(100 * p.accuracy, 0, 'f', 1);
  lossLabel_->setText(text);
}

void MainWindow::showTrace(const std::shared_ptr<const TraceSnapshot>& trace) {
  attention_->setTrace(trace);
  if (capture_.step > 0 && trace->step >= capture_.step) {
    capture_.step = 0;
    QTimer::singleShot(kCaptureSettleMs, this, &MainWindow::saveCapture);
  }
}

void MainWindow::showError(const QString& message) {
  statusBar()->showMessage(message);
  if (capture_.step > 0) {
    capture_.step = 0;
    emit captureFinished(false, message);
    return;
  }
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Training stopped"), message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // not exec(): the window stays live behind it
}

void MainWindow::clearResults() {
  history_->clear();
  attention_->clear();
  chart_->setTotalSteps(config_.train.steps);
  progress_->setRange(0, config_.train.steps);
  progress_->setValue(0);
  progress_->setFormat(tr("step 0 / %1").arg(config_.train.steps));
  lossLabel_->setText(tr("loss \u2013"));
}

void MainWindow::saveCapture() {
  const QString file = capture_.file;
  if (grab().save(file))
    emit captureFinished(true, tr("saved %1").arg(file));
  else
    emit captureFinished(false, tr("could not write the screenshot to %1").arg(file));
}

}  // namespace attnlab
