#include "main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QFileDialog>
#include <QMessageBox>
#include <QProgressBar>
#include <QScrollBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "comparison_window.h"
#include "experiment_files.h"
#include "run_folder_watcher.h"
#include "experiment_panel.h"
#include "head_selection.h"
#include "last_state.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "presenter_mode.h"
#include "model_fine_tuner.h"
#include "model_opener.h"
#include "probe_editor.h"
#include "selection_bar.h"
#include "study_reports.h"
#include "tour_panel.h"
#include "train/memory_estimate.h"
#include "training_rate.h"
#include "view_export.h"
#include "view_state_keeper.h"
#include "welcome_page.h"

namespace attnlab {

namespace {

// Time for layouts and the chart's scene to settle after the last update before a capture.
constexpr int kCaptureSettleMs = 150;
const QString kGeometryKey = QStringLiteral("window/geometry");
const QString kStateKey = QStringLiteral("window/state");
const QString kLastExperimentKey = QStringLiteral("experiment/last");
const QString kLogScaleKey = QStringLiteral("view/logColourScale");

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("--:--");
  const long total = std::lround(seconds);
  const QString minutesSeconds =
      QStringLiteral("%1:%2").arg((total / 60) % 60, 2, 10, QLatin1Char('0')).arg(total % 60, 2, 10, QLatin1Char('0'));
  return total >= 3600 ? QStringLiteral("%1:%2").arg(total / 3600).arg(minutesSeconds) : minutesSeconds;
}

QString formatRate(double perSecond) {
  if (!std::isfinite(perSecond)) return QStringLiteral("--");
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
      attention_(new AttentionMapModel(this)),
      selection_(new HeadSelection(attention_, this)),
      panel_(new ExperimentPanel(this)),
      files_(new ExperimentFiles(*session_, this)),
      opener_(new ModelOpener(this)) {
  tours_ = new TourPanel(this);
  watcher_ = new RunFolderWatcher(*files_, this);  // before the File menu, which connects to it
  buildActions();
  buildCentralArea();
  buildViewMenus();
  buildStatusBar();
  addDockWidget(Qt::LeftDockWidgetArea, panel_);
  addDockWidget(Qt::RightDockWidgetArea, tours_);
  tours_->hide();
  resize(1600, 900);
  resizeDocks({panel_, tours_}, {340, 420}, Qt::Horizontal);

  panel_->setAppliedConfig(config_);
  files_->startedNew(QString::fromStdString(config_.name));
  connect(panel_, &ExperimentPanel::applyRequested, this, &MainWindow::applyExperiment);
  connect(files_, &ExperimentFiles::opened, this, &MainWindow::showOpened);
  new ViewStateKeeper(*this);  // after showOpened: the opened run's view settings win
  connect(watcher_, &RunFolderWatcher::statusMessage, this, [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  connect(files_, &ExperimentFiles::documentChanged, this, &MainWindow::showDocumentState);
  connect(files_, &ExperimentFiles::statusMessage, this, [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  showDocumentState();

  connect(session_, &TrainingSession::stateChanged, this, &MainWindow::showState);
  connect(opener_, &ModelOpener::opened, this, &MainWindow::showOpenedModel);
  connect(opener_, &ModelOpener::refused, this, &MainWindow::refuseModel);
  connectFineTuner();
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
  trainAction_ = new QAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Train"), this);
  trainAction_->setObjectName(QStringLiteral("trainAction"));
  trainAction_->setShortcut(Qt::Key_F5);
  trainAction_->setToolTip(tr("Train the experiment, or continue a paused one (F5)"));
  connect(trainAction_, &QAction::triggered, this, &MainWindow::train);
  pauseAction_ = new QAction(style()->standardIcon(QStyle::SP_MediaPause), tr("Pause"), this);
  pauseAction_->setObjectName(QStringLiteral("pauseAction"));
  pauseAction_->setShortcut(Qt::Key_F6);
  pauseAction_->setToolTip(tr("Pause training after the current step (F6)"));
  connect(pauseAction_, &QAction::triggered, session_, &TrainingSession::pause);
  stepAction_ = new QAction(style()->standardIcon(QStyle::SP_MediaSkipForward), tr("Step"), this);
  stepAction_->setObjectName(QStringLiteral("stepAction"));
  stepAction_->setShortcut(Qt::Key_F10);
  stepAction_->setToolTip(tr("Take one training step and pause, to watch the maps change step by step (F10)"));
  connect(stepAction_, &QAction::triggered, this, &MainWindow::stepOnce);
  resetAction_ = new QAction(style()->standardIcon(QStyle::SP_BrowserReload), tr("Reset"), this);
  resetAction_->setObjectName(QStringLiteral("resetAction"));
  resetAction_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  resetAction_->setToolTip(tr("Stop training and clear the results (Shift+F5)"));
  connect(resetAction_, &QAction::triggered, this, &MainWindow::resetWithQuestion);

  buildFileMenu();
  buildPresetsMenu();
  QMenu* compare = menuBar()->addMenu(tr("&Compare"));
  compare->addAction(tr("&New Comparison\u2026"), this, [this] { newComparisonWithDialog(config_, this); });
  compare->addAction(tr("&Open Comparison\u2026"), this, [this] { openComparisonWithDialog(this); });
  QMenu* training = menuBar()->addMenu(tr("&Training"));
  training->addActions({trainAction_, pauseAction_, stepAction_, resetAction_});

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
  bar->addActions({trainAction_, pauseAction_, stepAction_, resetAction_});
  bar->addSeparator();
  bar->addWidget(progress_);
  bar->addWidget(lossLabel_);
}

void MainWindow::buildFileMenu() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open Experiment\u2026"), files_,
                                  &ExperimentFiles::openWithDialog);
  open->setShortcut(QKeySequence::Open);
  file->addAction(tr("Open &Model…"), this, &MainWindow::openModelWithDialog)
      ->setStatusTip(tr("Open a pretrained model (GPT-2, Llama, Qwen2, Pythia) from the Hugging Face cache or a folder"));
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  fillRecentMenu();
  file->addSeparator();
  QAction* save = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save Experiment"), this,
                                  [this] { saveExperiment(false); });
  save->setShortcut(QKeySequence::Save);
  QAction* saveAs = file->addAction(tr("Save Experiment &As\u2026"), this, [this] { saveExperiment(true); });
  saveAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  // Something to save exists once a model is built (training, paused, ended or opened).
  connect(session_, &TrainingSession::stateChanged, save, [this, save, saveAs] {
    const bool any = session_->hasExperiment() || session_->hasOpenedModel();
    save->setEnabled(any);
    saveAs->setEnabled(any);
  });
  save->setEnabled(false);
  saveAs->setEnabled(false);
  file->addAction(tr("Auto&save Settings\u2026"), files_, &ExperimentFiles::editAutosave);
  file->addSeparator();
  // Follows a PyTorch export's run (train.py --out RUN): each new checkpoint opens as it lands.
  QAction* watch = file->addAction(tr("&Watch Run Folder\u2026"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Watch a run folder (train.py --out)"));
    if (dir.isEmpty()) return;
    if (const QString why = watcher_->watch(dir); !why.isEmpty()) QMessageBox::warning(this, tr("Cannot watch"), why);
  });
  watch->setStatusTip(tr("Follow a folder a PyTorch export's train.py writes into: each new checkpoint opens in every view"));
  QAction* unwatch = file->addAction(tr("Stop &Watching"), watcher_, &RunFolderWatcher::stop);
  unwatch->setEnabled(false);
  connect(watcher_, &RunFolderWatcher::watchingChanged, unwatch, &QAction::setEnabled);
  file->addSeparator();
  QAction* textFile = file->addAction(tr("Open &Text File for Training\u2026"), panel_, [this] {
    panel_->show();
    panel_->chooseTextFile();
  });
  textFile->setStatusTip(tr("Choose a UTF-8 file as the task in the experiment panel; Train or Apply then uses it"));
  file->addAction(tr("Open Study &Report\u2026"), this, [this] { openStudyReportWithDialog(this); })
      ->setStatusTip(tr("Browse a folder written by attnlab-cli study NAME (or study all): its report, charts and tables"));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::buildPresetsMenu() {
  QMenu* presets = menuBar()->addMenu(tr("&Presets"));
  presets->setToolTipsVisible(true);
  for (const std::string& name : presetNames()) {
    ExperimentConfig preset;
    if (!loadPreset(name, preset).empty()) continue;  // the preset tests keep this from happening
    const QString id = QString::fromStdString(name);
    QAction* action = presets->addAction(QString::fromStdString(preset.name), this, [this, id] { applyPreset(id); });
    action->setToolTip(QString::fromStdString(preset.description));
    action->setStatusTip(QString::fromStdString(preset.description));
    action->setObjectName(QStringLiteral("preset_") + id);
  }
}

void MainWindow::buildCentralArea() {
  probe_ = new ProbeEditor(attention_, this);
  selectionBar_ = new SelectionBar(attention_, selection_, this);
  connect(probe_, &ProbeEditor::probeEdited, session_, &TrainingSession::setProbe);
  connect(probe_, &ProbeEditor::drawRequested, session_, &TrainingSession::drawProbe);

  // The tab bar stays on top and the probe row sits under it, so switching to a view without the
  // probe row (Training) does not move the tabs.
  tabs_ = new QTabBar(this);
  tabs_->setObjectName(QStringLiteral("viewTabs"));
  tabs_->setDocumentMode(true);
  tabs_->setExpanding(false);
  pages_ = new QStackedWidget(this);
  const ViewContext context{attention_, selection_, session_, history_, false};
  for (const ViewKind& kind : viewKinds()) {
    views_.push_back(kind.make(context, this));
    pages_->addWidget(views_.back().widget);
    const int tab = tabs_->addTab(kind.title);
    tabs_->setTabToolTip(tab, kind.toolTip);
  }
  connect(tabs_, &QTabBar::currentChanged, pages_, &QStackedWidget::setCurrentIndex);

  attentionBar_ = new QWidget(this);
  auto* bar = new QVBoxLayout(attentionBar_);
  bar->setContentsMargins(6, 4, 6, 2);
  bar->addWidget(probe_);
  bar->addWidget(selectionBar_);
  connect(tabs_, &QTabBar::currentChanged, this, [this](int index) { attentionBar_->setVisible(viewKinds().at(index).showsProbe); });
  attentionBar_->setVisible(viewKinds().front().showsProbe);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(tabs_);
  layout->addWidget(attentionBar_);
  layout->addWidget(pages_, 1);
  setCentralWidget(central);
}

void MainWindow::showView(int index) { tabs_->setCurrentIndex(index); }

void MainWindow::showView(const QString& id) { showView(viewKindIndex(id)); }

int MainWindow::currentView() const { return tabs_->currentIndex(); }

void MainWindow::buildViewMenus() {
  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  QAction* showPanel = panel_->toggleViewAction();
  showPanel->setText(tr("Experiment Panel"));
  showPanel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  viewMenu->addAction(showPanel);
  QAction* showTour = tours_->toggleViewAction();
  showTour->setText(tr("Tour Panel"));
  viewMenu->addAction(showTour);
  viewMenu->addSeparator();
  auto* group = new QActionGroup(this);
  for (int i = 0; i < static_cast<int>(viewKinds().size()); ++i) {
    QAction* action = viewMenu->addAction(viewKinds()[i].menuText, this, [this, i] { showView(i); });
    action->setToolTip(viewKinds()[i].toolTip);
    if (i < 9) action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    action->setCheckable(true);
    action->setChecked(i == 0);
    group->addAction(action);
    connect(tabs_, &QTabBar::currentChanged, action, [action, i](int index) { action->setChecked(index == i); });
  }
  viewMenu->addSeparator();
  QAction* logScale = viewMenu->addAction(tr("&Log colour scale"));
  logScale->setCheckable(true);
  logScale->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  connect(logScale, &QAction::toggled, attention_, [this](bool on) {
    attention_->setColourScale(on ? AttentionMapModel::ColourScale::Log : AttentionMapModel::ColourScale::Linear);
  });

  connect(attention_, &AttentionMapModel::mapChanged, logScale, [this, logScale] {
    logScale->setChecked(attention_->colourScale() == AttentionMapModel::ColourScale::Log);
  });
  QAction* draw = viewMenu->addAction(tr("&Draw a new probe example"), session_, &TrainingSession::drawProbe);
  draw->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
  viewMenu->addSeparator();
  (new PresenterMode(this))->addTo(viewMenu);

  QMenu* exportMenu = menuBar()->addMenu(tr("&Export"));
  const auto exportCurrent = [this](ExportFormat format) {
    if (ExportableView* view = exportable(currentView())) exportViewInteractively(*view, format, this);
  };
  QAction* png = exportMenu->addAction(tr("Current view as &PNG..."), this, [exportCurrent] { exportCurrent(ExportFormat::Png); });
  QAction* svg = exportMenu->addAction(tr("Current view as &SVG..."), this, [exportCurrent] { exportCurrent(ExportFormat::Svg); });
  QAction* csv = exportMenu->addAction(tr("Current view's data as &CSV..."), this, [exportCurrent] { exportCurrent(ExportFormat::Csv); });
  connect(exportMenu, &QMenu::aboutToShow, this, [this, png, svg, csv] {
    for (QAction* action : {png, svg, csv}) action->setEnabled(exportable(currentView()) != nullptr);
  });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* guide = help->addAction(tr("&User guide"), this, &MainWindow::showGuide);
  guide->setShortcut(QKeySequence::HelpContents);
  QMenu* toursMenu = help->addMenu(tr("&Tours"));
  connect(toursMenu, &QMenu::aboutToShow, tours_, [this, toursMenu] { tours_->fillMenu(toursMenu); });
  tours_->fillMenu(toursMenu);
  help->addAction(tr("&Welcome page"), this, [this] { WelcomePage::showFor(this); });
  help->addAction(tr("&About Attention Lab"), this, [this] {
    QMessageBox::about(this, tr("About Attention Lab"),
                       tr("<b>Attention Lab %1</b><p>Build a small Transformer, train it on your CPU and watch its "
                          "attention form. Help ▸ User guide explains every part and view.</p>")
                           .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::showGuide() {
  auto* dialog = findChild<QDialog*>(QStringLiteral("userGuide"));
  if (!dialog) {
    dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("userGuide"));
    dialog->setWindowTitle(tr("Attention Lab — User guide"));
    auto* browser = new QTextBrowser(dialog);
    browser->setOpenExternalLinks(true);
    browser->setSource(QUrl(QStringLiteral("qrc:/guide/guide.md")), QTextDocument::MarkdownResource);
    auto* layout = new QVBoxLayout(dialog);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(browser);
    dialog->resize(820, 760);
  }
  dialog->show();
  dialog->raise();
  // F1 on a view opens the guide at that view's section.
  auto* browser = dialog->findChild<QTextBrowser*>();
  const QString section = viewKinds().at(currentView()).guideSection;
  for (QTextBlock block = browser->document()->begin(); block.isValid(); block = block.next()) {
    if (block.blockFormat().headingLevel() == 0 || block.text() != section) continue;
    browser->verticalScrollBar()->setValue(browser->verticalScrollBar()->maximum());  // so the heading ends up on top
    browser->setTextCursor(QTextCursor(block));
    browser->ensureCursorVisible();
    break;
  }
}

void MainWindow::buildStatusBar() {
  experimentLabel_ = new QLabel(this);
  experimentLabel_->setObjectName(QStringLiteral("experimentLabel"));
  statusBar()->addPermanentWidget(experimentLabel_);
}

void MainWindow::startTraining() { session_->start(config_); }

void MainWindow::captureAfterSteps(int steps, const QString& file, const QString& exportFile) {
  capture_ = {std::min(steps, config_.train.steps), file, exportFile};
  session_->setPauseAtStep(steps);
}

void MainWindow::train() {
  switch (session_->state()) {
    case TrainingSession::State::Running: break;
    case TrainingSession::State::Paused: session_->resume(); break;
    case TrainingSession::State::Finished:
      if (session_->hasExperiment()) {  // not an opened Hugging Face model (fine-tuned by startFresh)
        continueOrStartOver();
        break;
      }
      [[fallthrough]];
    default: startFresh(0); break;
  }
}

void MainWindow::continueOrStartOver() {
  const FinishedRunChoice choice =
      finishedRunPrompt_ ? finishedRunPrompt_(files_->trainedSteps()) : askAboutFinishedRun(this, files_->trainedSteps());
  if (choice.action == FinishedRunChoice::Action::StartOver) {
    startFresh(0);  // asks first about trained steps not saved
  } else if (choice.action == FinishedRunChoice::Action::Continue && choice.moreSteps > 0) {
    config_.train.steps += choice.moreSteps;
    panel_->setAppliedConfig(config_);
    history_->setPlan(config_.train.steps, config_.model.n_layers);
    session_->continueFor(choice.moreSteps);
    showDocumentState();
  }
}

void MainWindow::stepOnce() {
  switch (session_->state()) {
    case TrainingSession::State::Running: break;
    case TrainingSession::State::Paused: session_->step(); break;
    default: startFresh(1); break;
  }
}

// Trains the panel's experiment from scratch (with its pending edits, if they are valid).
bool MainWindow::startFresh(int pauseAtStep) {
  ExperimentConfig edited;
  if (const QString why = panel_->readConfig(edited); !why.isEmpty()) {
    panel_->show();
    statusBar()->showMessage(tr("Cannot train: %1").arg(why));
    return false;
  }
  // An opened model is fine-tuned (model_fine_tuner.h), unless the user picks the panel's experiment.
  if (session_->hasOpenedModel() && modelFineTuner().train(pauseAtStep)) return false;
  if (!files_->confirmDiscard(tr("training a new model"))) return false;
  if (panel_->hasChanges()) {
    config_ = edited;
    panel_->setAppliedConfig(config_);
    rememberExperiment();
  }
  files_->startedNew(QString::fromStdString(config_.name));
  session_->setPauseAtStep(pauseAtStep);
  startTraining();
  showDocumentState();
  return true;
}

void MainWindow::resetWithQuestion() {
  if (!files_->confirmDiscard(tr("resetting"))) return;
  session_->reset();
  files_->startedNew(QString::fromStdString(config_.name));
}

bool MainWindow::applyExperiment(const ExperimentConfig& config) {
  if (!files_->confirmDiscard(tr("applying the new settings"))) return false;
  session_->reset();
  config_ = config;
  presetName_.clear();  // applyPreset names it again; edited settings are no preset's
  panel_->setAppliedConfig(config_);
  files_->startedNew(QString::fromStdString(config_.name));
  clearResults();
  showDocumentState();
  rememberExperiment();
  statusBar()->showMessage(tr("Ready: %1. Press Train (F5).").arg(QString::fromStdString(config_.name)), 8000);
  return true;
}

bool MainWindow::applyPreset(const QString& name) {
  ExperimentConfig preset;
  if (const std::string why = loadPreset(name.toStdString(), preset); !why.empty()) {
    statusBar()->showMessage(QString::fromStdString(why));
    return false;
  }
  if (!applyExperiment(preset)) return false;
  presetName_ = name;
  showDocumentState();  // the label's tooltip names the preset
  return true;
}

void MainWindow::showOpened(const ExperimentConfig& config, const QString& dir) {
  config_ = config;
  flopsPerStep_ = 0;
  panel_->setAppliedConfig(config_);
  history_->setPlan(config_.train.steps, config_.model.n_layers);
  presetName_.clear();
  rememberExperiment();
  showDocumentState();
  statusBar()->showMessage(tr("Opened %1: press Train (F5) to continue training it").arg(QDir::toNativeSeparators(dir)), 8000);
}

void MainWindow::showDocumentState() {
  const QString folder = files_->currentFolder();
  const QString name = QString::fromStdString(config_.name);
  setWindowTitle(tr("%1%2[*] \u2014 Attention Lab").arg(name, folder.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(QDir::toNativeSeparators(folder))));
  setWindowModified(files_->hasUnsavedSteps());
  experimentLabel_->setText(describe(config_));
  experimentLabel_->setToolTip(presetName_.isEmpty() ? QString::fromStdString(config_.description)
                                                     : tr("Preset \u201c%1\u201d: %2").arg(presetName_, QString::fromStdString(config_.description)));
}

void MainWindow::fillRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = files_->recentFolders();
  for (const QString& dir : recent)
    recentMenu_->addAction(QDir::toNativeSeparators(dir), files_, [this, dir] { files_->open(dir); });
  if (recent.isEmpty()) recentMenu_->addAction(tr("(none yet)"))->setEnabled(false);
  recentMenu_->setEnabled(true);
}

void MainWindow::rememberExperiment() {
  if (persistLayout_) QSettings().setValue(kLastExperimentKey, QString::fromStdString(configToJson(config_)));
}

void MainWindow::restoreLayout() {
  QSettings settings;
  restoreGeometry(settings.value(kGeometryKey).toByteArray());
  restoreState(settings.value(kStateKey).toByteArray());
  if (settings.value(kLogScaleKey, false).toBool()) attention_->setColourScale(AttentionMapModel::ColourScale::Log);
  persistLayout_ = true;
  if (!lastState_) lastState_ = new LastState(*files_, this);
}

bool MainWindow::restoreLastExperiment() {
  QString notReopened;
  if (lastState_ && lastState_->reopen(notReopened)) {
    statusBar()->showMessage(notReopened);
    return true;
  }
  const QString json = QSettings().value(kLastExperimentKey).toString();
  ExperimentConfig last;
  const bool restored =
      !json.isEmpty() && configFromJson(json.toStdString(), last).empty() && validate(last).empty() && applyExperiment(last);
  if (!notReopened.isEmpty()) statusBar()->showMessage(notReopened);
  return restored;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!files_->confirmDiscard(tr("closing"))) {
    event->ignore();
    return;
  }
  if (persistLayout_) {
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState());
    settings.setValue(kLogScaleKey, attention_->colourScale() == AttentionMapModel::ColourScale::Log);
  }
  if (lastState_) lastState_->markClosed();
  session_->reset();  // joins the worker before the window goes
  event->accept();
}

void MainWindow::showState(TrainingSession::State state) {
  using State = TrainingSession::State;
  const bool running = state == State::Running;
  trainAction_->setEnabled(!running);
  trainAction_->setText(state == State::Paused ? tr("Resume") : tr("Train"));
  pauseAction_->setEnabled(running);
  stepAction_->setEnabled(!running);
  resetAction_->setEnabled(state != State::Idle);
  if (state != State::Failed) statusBar()->showMessage(TrainingSession::stateName(state));
}

void MainWindow::showProgress(const ProgressSnapshot& p) {
  learnTrainingRate(p.steps_per_second);
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
  if (!p.qk_guard.empty()) text += "  \u00b7  " + QString::fromStdString(p.qk_guard);
  lossLabel_->setText(text);
}

// The running experiment's own speed is a better rate for the panel's time estimate than the
// small model measured at start: each progress report's steps/s times its FLOPs per step, kept
// when it moves by more than a tenth (the panel re-checks its editors on each change).
void MainWindow::learnTrainingRate(double stepsPerSecond) {
  if (!(stepsPerSecond > 0) || !std::isfinite(stepsPerSecond)) return;
  if (!(flopsPerStep_ > 0)) {
    MemoryEstimate e;
    if (!estimateMemory(config_, e).empty()) return;
    flopsPerStep_ = trainingFlopsPerStep(config_, e);
  }
  TrainingRate* rate = TrainingRate::shared();
  const double measured = flopsPerStep_ * stepsPerSecond;
  if (!rate->known() || std::abs(measured / rate->flopsPerSecond() - 1) > 0.1) rate->set(measured);
}

void MainWindow::showTrace(const std::shared_ptr<const TraceSnapshot>& trace) {
  attention_->setTrace(trace);
  if ((capture_.step > 0 && trace->step >= capture_.step) || (capture_.whenOpened && session_->hasOpenedModel())) {
    capture_.step = 0;
    capture_.whenOpened = false;
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
  flopsPerStep_ = 0;  // another experiment
  session_->setHeadGains({});  // a new experiment starts with every head on
  history_->clear();
  attention_->clear();
  history_->setPlan(config_.train.steps, config_.model.n_layers);
  progress_->setRange(0, config_.train.steps);
  progress_->setValue(0);
  progress_->setFormat(tr("step 0 / %1").arg(config_.train.steps));
  lossLabel_->setText(tr("loss \u2013"));
}

void MainWindow::saveCapture() {
  const QString file = capture_.file;
  QStringList saved;
  if (!file.isEmpty()) {
    settleView(currentView());
    if (!grab().save(file)) return emit captureFinished(false, tr("could not write the screenshot to %1").arg(file));
    saved << file;
  }
  if (!capture_.exportFile.isEmpty()) {
    // A folder (an existing one, or a path ending in '/') gets every view as PNG; a file the
    // shown view, in the format its suffix names.
    QFileInfo target(capture_.exportFile);
    std::vector<std::pair<int, QString>> exports;
    if (target.isDir() || capture_.exportFile.endsWith(QLatin1Char('/'))) {
      if (!QDir().mkpath(capture_.exportFile)) return emit captureFinished(false, tr("could not create %1").arg(capture_.exportFile));
      for (int v = 0; v < static_cast<int>(viewKinds().size()); ++v)
        if (exportable(v)) exports.push_back({v, QDir(capture_.exportFile).filePath(viewKinds()[v].id + QStringLiteral(".png"))});
    } else {
      exports.push_back({currentView(), capture_.exportFile});
    }
    for (const auto& [view, file] : exports) {
      showView(view);
      QApplication::processEvents();  // lay the tab out at its real size before drawing it
      settleView(view);
      const QString suffix = QFileInfo(file).suffix().toLower();
      const ExportFormat format = suffix == QLatin1String("svg")   ? ExportFormat::Svg
                                  : suffix == QLatin1String("csv") ? ExportFormat::Csv
                                                                   : ExportFormat::Png;
      if (!exportable(view)) return emit captureFinished(false, tr("the %1 view has no export").arg(viewKinds()[view].id));
      const QString error = exportView(*exportable(view), format, file);
      if (!error.isEmpty()) return emit captureFinished(false, error);
      saved << file;
    }
  }
  emit captureFinished(true, tr("saved %1").arg(saved.join(QStringLiteral(", "))));
}

// Views that compute in the background once shown finish that before a capture.
void MainWindow::settleView(int index) {
  if (const auto& settle = views_.at(index).settle) settle();
  QApplication::processEvents();
}

}  // namespace attnlab
