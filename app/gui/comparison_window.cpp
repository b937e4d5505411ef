#include "comparison_window.h"

#include <utility>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "attention_difference_model.h"
#include "attention_difference_view.h"
#include "attention_map_model.h"
#include "comparison_metrics_model.h"
#include "comparison_pane.h"
#include "head_selection.h"
#include "io/checkpoint.h"
#include "kv/eviction_policy.h"
#include "new_comparison_dialog.h"
#include "policy_picker.h"
#include "probe_editor.h"
#include "selection_link.h"
#include "kv_policy_link.h"
#include "shared_colour_scale.h"
#include "comparison_lengths.h"
#include "length_sweep.h"
#include "view_kind.h"

namespace attnlab {

namespace {

constexpr int kCaptureSettleMs = 250;
constexpr int kMetricsEverySeconds = 20;  // cache figures of running runs are refreshed this often
const QStringList kBudgets = {QStringLiteral("8"), QStringLiteral("16"), QStringLiteral("32"), QStringLiteral("25%"), QStringLiteral("50%"),
                             QStringLiteral("unlimited")};

bool sameVocabulary(const TraceSnapshot* a, const TraceSnapshot* b) {
  return a && b && a->vocabulary && b->vocabulary && a->vocabulary->level() == b->vocabulary->level() &&
         a->vocabulary->tokens() == b->vocabulary->tokens();
}

}  // namespace

ComparisonWindow::ComparisonWindow(const std::vector<ExperimentConfig>& configs, QWidget* parent, const QStringList& modelFolders)
    : QMainWindow(parent),
      link_(new SelectionLink(this)),
      colourScale_(new SharedColourScale(this)),
      kvLink_(new KvPolicyLink(this)),
      metrics_(new ComparisonMetricsModel(this)),
      difference_(new AttentionDifferenceModel(this)) {
  QStringList names, titles;
  lengthSweep_ = new LengthSweep(static_cast<int>(configs.size()), this);
  for (size_t i = 0; i < configs.size(); ++i) {
    auto* pane = new ComparisonPane(static_cast<int>(i), configs[i], this);
    panes_.push_back(pane);
    if (static_cast<int>(i) < modelFolders.size() && !modelFolders[i].isEmpty()) pane->openModelFolder(modelFolders[i]);
    originalThreads_.push_back(configs[i].train.threads);
    savedSteps_.push_back(0);
    names << pane->shortName();
    titles << QString::fromStdString(configs[i].name);
    link_->add(pane->selection());
    colourScale_->add(pane->selection());
    pane->setColourScale(colourScale_);
    pane->setKvLink(kvLink_);
    pane->setLengthSweep(lengthSweep_);
    connect(pane, &ComparisonPane::traced, this, &ComparisonWindow::paneTraced);
    connect(pane, &ComparisonPane::stateChanged, this, &ComparisonWindow::paneStateChanged);
    connect(pane, &ComparisonPane::progressed, metrics_, &ComparisonMetricsModel::setProgress);
    connect(pane, &ComparisonPane::watchedCheckpointOpened, this, [this](int index, int steps) {
      savedSteps_[index] = steps;  // the folder's steps, not unsaved work
      ComparisonPane* watched = panes_[index];  // its experiment is the run's own: titles follow it
      metrics_->renameRun(index, watched->shortName(), watched->config());
      aPicker_->setItemText(index, watched->runName());
      bPicker_->setItemText(index, watched->runName());
      offerUsablePolicies();
    });
    connect(pane->session(), &TrainingSession::cleared, metrics_, [this, i] { metrics_->clearRun(static_cast<int>(i)); });
    connect(pane->attention(), &AttentionMapModel::mapChanged, this, &ComparisonWindow::updateNotes);
    connect(pane->selection(), &HeadSelection::headChanged, this, &ComparisonWindow::updateNotes);
    connect(pane->session(), &TrainingSession::saved, this, [this, i](const QString& dir, int step, const QString& error) {
      if (!pendingSave_ || !pendingSave_->waiting.removeOne(dir)) return;
      if (!error.isEmpty()) pendingSave_->errors << error;
      else savedSteps_[i] = step;
      if (pendingSave_->waiting.isEmpty()) finishSave();
    });
  }
  metrics_->setRuns(names, configs);
  columns_ = std::min(2, paneCount());  // 3 and 4 runs: a 2 x 2 grid
  setWindowTitle(tr("Comparison: %1 \u2014 Attention Lab").arg(titles.join(tr(" vs "))));

  buildToolBar();
  buildCentralArea();
  connect(link_, &SelectionLink::selectionChanged, this, &ComparisonWindow::syncSelectionPickers);
  connect(link_, &SelectionLink::shapeChanged, this, &ComparisonWindow::syncSelectionPickers);
  connect(metrics_, &ComparisonMetricsModel::busyChanged, this, &ComparisonWindow::checkCapture);

  const bool allGated = std::all_of(configs.begin(), configs.end(), [](const ExperimentConfig& c) { return c.model.retention_gate; });
  setEviction(allGated ? QStringLiteral("learned_gate") : QStringLiteral("h2o"), QStringLiteral("16"));
  compare(0, std::min(1, paneCount() - 1));
  setViewKind(viewKindIndex(QStringLiteral("attention")));  // what a comparison is first about
  setOneAfterAnother(false);
  syncSelectionPickers();
  auto* refresh = new QTimer(this);
  connect(refresh, &QTimer::timeout, this, [this] {
    for (ComparisonPane* pane : panes_)
      if (pane->session()->state() == TrainingSession::State::Running) evaluateMetrics(pane->index());
  });
  refresh->start(kMetricsEverySeconds * 1000);
  statusBar()->showMessage(tr("Press Train all (F5) to train every run"));
  resize(1600, 1000);
}

ComparisonWindow::~ComparisonWindow() {
  for (ComparisonPane* pane : panes_) pane->session()->reset();  // join the workers before the models go
}

void ComparisonWindow::buildToolBar() {
  QToolBar* bar = addToolBar(tr("Comparison"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  QAction* train = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Train all"), this, &ComparisonWindow::trainAll);
  train->setShortcut(Qt::Key_F5);
  train->setToolTip(tr("Train every run (or continue the paused ones) (F5)"));
  QAction* pause = bar->addAction(style()->standardIcon(QStyle::SP_MediaPause), tr("Pause all"), this, &ComparisonWindow::pauseAll);
  pause->setShortcut(Qt::Key_F6);
  QAction* reset = bar->addAction(style()->standardIcon(QStyle::SP_BrowserReload), tr("Reset all"), this, &ComparisonWindow::resetAll);
  reset->setToolTip(tr("Stop every run and clear the results"));
  bar->addSeparator();
  schedulePicker_ = new QComboBox(bar);
  schedulePicker_->addItems({tr("together"), tr("one after another")});
  schedulePicker_->setToolTip(tr("Together: all runs train at once, each with an equal share of the cores.\n"
                                 "One after another: each run trains alone with its own threads, the next starts when one finishes."));
  connect(schedulePicker_, &QComboBox::currentIndexChanged, this, [this](int i) { setOneAfterAnother(i == 1); });
  bar->addWidget(new QLabel(tr(" Train runs "), bar));
  bar->addWidget(schedulePicker_);
  scheduleLabel_ = new QLabel(bar);
  scheduleLabel_->setContentsMargins(8, 0, 8, 0);
  bar->addWidget(scheduleLabel_);
  bar->addSeparator();
  viewPicker_ = new QComboBox(bar);
  for (const ViewKind& kind : viewKinds()) viewPicker_->addItem(QString(kind.menuText).remove(QLatin1Char('&')), kind.id);
  viewPicker_->setToolTip(tr("The view every run shows"));
  connect(viewPicker_, &QComboBox::currentIndexChanged, this, &ComparisonWindow::setViewKind);
  bar->addWidget(new QLabel(tr(" Show "), bar));
  bar->addWidget(viewPicker_);
  bar->addSeparator();
  auto* watch = new QToolButton(bar);  // a pane follows a run folder that a trainer elsewhere writes into
  watch->setText(tr("Watch Run Folder"));
  watch->setToolTip(tr("Show a run that trains elsewhere (the PyTorch export's train.py) in one of the panes;\n"
                       "each new checkpoint in the folder opens there as it lands"));
  watch->setPopupMode(QToolButton::InstantPopup);
  auto* watchMenu = new QMenu(watch);
  for (ComparisonPane* pane : panes_) {
    const int index = pane->index();
    watchMenu->addAction(tr("In run %1\u2026").arg(index + 1), this, [this, index] { watchWithDialog(index); });
  }
  watch->setMenu(watchMenu);
  bar->addWidget(watch);
  bar->addSeparator();
  QAction* save = bar->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Save comparison\u2026"), this,
                                 &ComparisonWindow::saveWithDialog);
  save->setShortcut(QKeySequence::Save);
  QAction* open = bar->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("Open\u2026"), this,
                                 &ComparisonWindow::openWithDialog);
  open->setShortcut(QKeySequence::Open);
}

void ComparisonWindow::buildCentralArea() {
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(6, 4, 6, 4);

  // Shared probe and selection.
  probe_ = new ProbeEditor(panes_.front()->attention(), central);
  connect(probe_, &ProbeEditor::probeEdited, this, [this](const std::vector<int>& tokens) {
    const bool shared = probeNote().isEmpty();
    if (shared) sharedProbe_ = tokens;
    for (ComparisonPane* pane : panes_)
      if (shared || pane == panes_.front()) pane->session()->setProbe(tokens);
  });
  connect(probe_, &ProbeEditor::drawRequested, panes_.front()->session(), &TrainingSession::drawProbe);
  probeNote_ = new QLabel(central);
  probeNote_->setStyleSheet(QStringLiteral("color: #a05a00;"));
  probeNote_->setWordWrap(true);
  probeNote_->hide();
  layout->addWidget(probe_);
  layout->addWidget(probeNote_);

  auto* selection = new QHBoxLayout;
  layerPicker_ = new QComboBox(central);
  headPicker_ = new QComboBox(central);
  layerPicker_->setObjectName(QStringLiteral("sharedLayerPicker"));
  headPicker_->setObjectName(QStringLiteral("sharedHeadPicker"));
  connect(layerPicker_, &QComboBox::currentIndexChanged, this, [this](int layer) {
    if (layer >= 0) link_->select(layer, std::min(link_->head(), std::max(0, link_->maxHeads(layer) - 1)));
  });
  connect(headPicker_, &QComboBox::currentIndexChanged, this, [this](int head) {
    if (head >= 0) link_->select(link_->layer(), head);
  });
  auto* log = new QCheckBox(tr("log colour scale"), central);
  connect(log, &QCheckBox::toggled, this, [this](bool on) {
    for (ComparisonPane* pane : panes_)
      pane->attention()->setColourScale(on ? AttentionMapModel::ColourScale::Log : AttentionMapModel::ColourScale::Linear);
  });
  selection->addWidget(new QLabel(tr("Layer"), central));
  selection->addWidget(layerPicker_);
  selection->addSpacing(8);
  selection->addWidget(new QLabel(tr("Head"), central));
  selection->addWidget(headPicker_);
  selection->addSpacing(16);
  selection->addWidget(log);
  auto* sharedScale = new QCheckBox(tr("one colour scale for all runs"), central);
  sharedScale->setObjectName(QStringLiteral("sharedColourScale"));
  sharedScale->setChecked(colourScale_->isShared());
  sharedScale->setToolTip(tr("On: every run's heatmap is coloured up to the largest weight of any run, so equal colours are equal "
                             "weights side by side. Off: each run up to its own largest weight."));
  connect(sharedScale, &QCheckBox::toggled, colourScale_, &SharedColourScale::setShared);
  selection->addSpacing(8);
  selection->addWidget(sharedScale);
  auto* linkKv = new QCheckBox(tr("one KV policy for all runs"), central);
  linkKv->setObjectName(QStringLiteral("linkKvPolicy"));
  linkKv->setChecked(kvLink_->isLinked());
  linkKv->setToolTip(tr("On: choosing a KV-cache policy, budget or policy setting in one run's KV cache view sets it in every run's, "
                        "so they differ only in the model. Off: each run keeps its own."));
  connect(linkKv, &QCheckBox::toggled, kvLink_, &KvPolicyLink::setLinked);
  selection->addSpacing(8);
  selection->addWidget(linkKv);
  selection->addSpacing(16);
  auto* hint = new QLabel(tr("One selection for all runs: choosing a head here or clicking one in any model view selects it everywhere."), central);
  hint->setStyleSheet(QStringLiteral("color: #666;"));
  selection->addWidget(hint, 1);
  layout->addLayout(selection);

  auto* splitter = new QSplitter(Qt::Horizontal, central);
  auto* gridHolder = new QWidget(splitter);
  grid_ = new QGridLayout(gridHolder);
  grid_->setContentsMargins(0, 0, 0, 0);
  grid_->setSpacing(6);
  layoutGrid();
  auto* side = new QWidget(splitter);
  buildSidePanel(side);
  splitter->addWidget(gridHolder);
  splitter->addWidget(side);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({1250, 330});  // the side column fits the metrics of two runs; drag for more
  layout->addWidget(splitter, 1);
  setCentralWidget(central);
}

void ComparisonWindow::buildSidePanel(QWidget* side) {
  auto* layout = new QVBoxLayout(side);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* differenceGroup = new QGroupBox(tr("Attention difference"), side);
  differenceBox_ = differenceGroup;
  auto* d = new QVBoxLayout(differenceGroup);
  auto* pickers = new QHBoxLayout;
  aPicker_ = new QComboBox(differenceGroup);
  bPicker_ = new QComboBox(differenceGroup);
  for (ComparisonPane* pane : panes_) {
    aPicker_->addItem(pane->runName());
    bPicker_->addItem(pane->runName());
  }
  auto pick = [this] { compare(aPicker_->currentIndex(), bPicker_->currentIndex()); };
  connect(aPicker_, &QComboBox::currentIndexChanged, this, pick);
  connect(bPicker_, &QComboBox::currentIndexChanged, this, pick);
  pickers->addWidget(aPicker_, 1);
  pickers->addWidget(new QLabel(QStringLiteral("\u2212"), differenceGroup));
  pickers->addWidget(bPicker_, 1);
  d->addLayout(pickers);
  differenceView_ = new AttentionDifferenceView(difference_, differenceGroup);
  d->addWidget(differenceView_, 1);
  layout->addWidget(differenceGroup, 4);
  lengths_ = new ComparisonLengths(panes_, lengthSweep_, side);
  layout->addWidget(lengths_, 8);

  auto* metricsGroup = new QGroupBox(tr("Metrics"), side);
  auto* m = new QVBoxLayout(metricsGroup);
  auto* eviction = new QHBoxLayout;
  policyPicker_ = new QComboBox(metricsGroup);
  policyPicker_->setObjectName(QStringLiteral("metricsPolicy"));
  for (const auto& entry : EvictionPolicyRegistry::instance().entries()) {
    policyPicker_->addItem(QString::fromStdString(entry.name));
    policyPicker_->setItemData(policyPicker_->count() - 1, QString::fromStdString(entry.summary), Qt::ToolTipRole);
  }
  offerUsablePolicies();
  budgetPicker_ = new QComboBox(metricsGroup);
  budgetPicker_->addItems(kBudgets);
  budgetPicker_->setToolTip(tr("Cache entries each KV head may keep: a count, or a share of the positions seen. Unlimited: "
                                "the policy's own rule decides (learned_gate: entries whose gate g is below 0.5 leave)"));
  auto changed = [this] { setEviction(policyPicker_->currentText(), budgetPicker_->currentText()); };
  connect(policyPicker_, &QComboBox::currentIndexChanged, this, changed);
  connect(budgetPicker_, &QComboBox::currentIndexChanged, this, changed);
  auto* evaluate = new QPushButton(tr("Evaluate now"), metricsGroup);
  evaluate->setToolTip(tr("Decode the validation sample through the cache with every run's latest weights"));
  connect(evaluate, &QPushButton::clicked, this, [this] {
    for (int i = 0; i < paneCount(); ++i) evaluateMetrics(i);
  });
  eviction->addWidget(new QLabel(tr("Eviction"), metricsGroup));
  eviction->addWidget(policyPicker_, 1);
  eviction->addWidget(new QLabel(tr("budget"), metricsGroup));
  eviction->addWidget(budgetPicker_);
  eviction->addWidget(evaluate);
  m->addLayout(eviction);
  table_ = new QTableView(metricsGroup);
  table_->setModel(metrics_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  m->addWidget(table_, 1);
  auto* explain = new QLabel(tr("Cache figures: %1 validation sequences decoded token by token through the KV cache, "
                                "with every entry kept (full), under the eviction policy, and (gated models) with the "
                                "learned gate alone deciding; computed when a run pauses or finishes, every %2 s while "
                                "it trains, or on Evaluate now.").arg(ComparisonMetricsModel::kEvalSequences).arg(kMetricsEverySeconds), metricsGroup);
  explain->setWordWrap(true);
  explain->setStyleSheet(QStringLiteral("color: #666;"));
  m->addWidget(explain);
  layout->addWidget(metricsGroup, 5);
}

void ComparisonWindow::layoutGrid() {
  for (size_t i = 0; i < panes_.size(); ++i) grid_->addWidget(panes_[i], static_cast<int>(i) / columns_, static_cast<int>(i) % columns_);
}

QString ComparisonWindow::probeNote() const {
  const TraceSnapshot* first = panes_.front()->attention()->snapshot();
  for (ComparisonPane* pane : panes_) {
    const TraceSnapshot* s = pane->attention()->snapshot();
    if (!first || !s) continue;
    if (!sameVocabulary(first, s))
      return tr("Run %1 has another vocabulary than run 1 (a different task), so the runs cannot share a probe: each shows "
                "its own task's probe, and the probe field edits run 1's.").arg(pane->index() + 1);
  }
  return {};
}

void ComparisonWindow::setViewKind(int kind) {
  if (kind < 0 || kind >= static_cast<int>(viewKinds().size())) return;
  viewKind_ = kind;
  {
    const QSignalBlocker quiet(viewPicker_);
    viewPicker_->setCurrentIndex(kind);
  }
  for (ComparisonPane* pane : panes_) pane->setViewKind(kind);
  differenceBox_->setVisible(viewKinds()[kind].id == QLatin1String("attention"));
  lengths_->setVisible(viewKinds()[kind].id == QLatin1String("lengths"));
}

void ComparisonWindow::setOneAfterAnother(bool on) {
  oneAfterAnother_ = on;
  {
    const QSignalBlocker quiet(schedulePicker_);
    schedulePicker_->setCurrentIndex(on ? 1 : 0);
  }
  for (size_t i = 0; i < panes_.size(); ++i)
    panes_[i]->setThreads(on ? originalThreads_[i] : std::min(originalThreads_[i], threadsPerRun()));
  if (!on) {
    chainActive_ = false;
    for (ComparisonPane* pane : panes_) pane->setWaiting(false);
  }
  updateScheduleLabel();
}

int ComparisonWindow::threadsPerRun() const { return std::max(1, QThread::idealThreadCount() / paneCount()); }

void ComparisonWindow::updateScheduleLabel() {
  if (oneAfterAnother_) {
    scheduleLabel_->setText(tr("each run alone, with its own threads"));
  } else {
    const int cores = QThread::idealThreadCount();
    QString text = tr("%1 runs \u00d7 %2 thread%3 on %4 cores")
                       .arg(paneCount())
                       .arg(threadsPerRun())
                       .arg(threadsPerRun() == 1 ? QString() : QStringLiteral("s"))
                       .arg(cores);
    if (paneCount() > cores) text += tr(" (more runs than cores: they take turns)");
    scheduleLabel_->setText(text);
  }
}

void ComparisonWindow::offerUsablePolicies() {
  if (!policyPicker_) return;
  std::vector<const ModelConfig*> models;  // one picker for every pane: a policy must suit them all
  for (const ComparisonPane* pane : panes_) models.push_back(&pane->config().model);
  markUsablePolicies(policyPicker_, models);
}

void ComparisonWindow::setEviction(const QString& policy, const QString& budget) {
  if (const QString why = metrics_->setEviction(policy, budget); !why.isEmpty()) {
    statusBar()->showMessage(why, 8000);
    return;
  }
  if (!policyPicker_) return;
  const QSignalBlocker quietPolicy(policyPicker_), quietBudget(budgetPicker_);
  policyPicker_->setCurrentText(policy);
  if (budgetPicker_->findText(budget) < 0) budgetPicker_->addItem(budget);
  budgetPicker_->setCurrentText(budget);
}

void ComparisonWindow::compare(int a, int b) {
  if (a < 0 || b < 0 || a >= paneCount() || b >= paneCount()) return;
  difference_->setRuns(panes_[a]->selection(), panes_[b]->selection());
  if (differenceView_) differenceView_->setRunNames(tr("run %1").arg(a + 1), tr("run %1").arg(b + 1));
  if (aPicker_) {
    const QSignalBlocker quietA(aPicker_), quietB(bPicker_);
    aPicker_->setCurrentIndex(a);
    bPicker_->setCurrentIndex(b);
  }
}

// ---- training ------------------------------------------------------------------------------

void ComparisonWindow::trainAll() {
  using State = TrainingSession::State;
  if (!oneAfterAnother_) {
    for (ComparisonPane* pane : panes_) {
      const State s = pane->session()->state();
      if (pane->watching()) continue;  // trains elsewhere
      if (s == State::Paused) pane->session()->resume();
      else if (s != State::Running && s != State::Finished) pane->start();
    }
    return;
  }
  chainActive_ = true;
  for (ComparisonPane* pane : panes_) pane->setWaiting(pane->session()->state() == State::Idle);
  for (ComparisonPane* pane : panes_)
    if (pane->session()->state() == State::Running) return;
  for (ComparisonPane* pane : panes_)
    if (pane->session()->state() == State::Paused && !pane->watching()) return pane->session()->resume();
  for (ComparisonPane* pane : panes_)
    if (pane->session()->state() != State::Finished && !pane->watching()) return pane->start();
}

void ComparisonWindow::pauseAll() {
  for (ComparisonPane* pane : panes_) pane->session()->pause();
}

void ComparisonWindow::resetAll() {
  chainActive_ = false;
  for (ComparisonPane* pane : panes_) pane->setWaiting(false), pane->stopWatching();
  sharedProbe_.clear();
  for (ComparisonPane* pane : panes_) pane->session()->reset();
  for (ComparisonPane* pane : panes_)  // an opened model comes back as it was opened
    if (!pane->modelFolder().isEmpty()) pane->openModelFolder(pane->modelFolder());
}

void ComparisonWindow::paneStateChanged(int index, TrainingSession::State state) {
  using State = TrainingSession::State;
  QStringList states;
  for (ComparisonPane* pane : panes_)
    states << tr("run %1 %2").arg(pane->index() + 1).arg(pane->watching() ? tr("watched")
                                                                             : TrainingSession::stateName(pane->session()->state()).toLower());
  statusBar()->showMessage(states.join(QStringLiteral(" \u00b7 ")));
  if (state == State::Paused || state == State::Finished || state == State::Stopped) evaluateMetrics(index);
  if (state == State::Failed && capture_.step > 0) {
    capture_.step = 0;
    emit captureFinished(false, tr("run %1 failed: %2").arg(index + 1).arg(panes_[index]->headerText()));
  }
  if (oneAfterAnother_ && chainActive_ && (state == State::Finished || state == State::Failed)) {
    for (ComparisonPane* pane : panes_)
      if (pane->session()->state() == State::Idle) return pane->start();
    chainActive_ = false;
    statusBar()->showMessage(tr("Every run has trained"), 8000);
  }
}

void ComparisonWindow::evaluateMetrics(int index) {
  const TraceSnapshot* snapshot = panes_[index]->attention()->snapshot();
  if (snapshot && snapshot->model) metrics_->evaluate(index, snapshot->model);
}

// The runs share run 1's probe when their vocabularies agree: a run showing another probe is
// given run 1's, and run 1's probe (drawn, edited or its default after a restart) becomes the
// shared one.
void ComparisonWindow::paneTraced(int index, const std::shared_ptr<const TraceSnapshot>& trace) {
  if (index == 0 && !restoredProbe_.empty()) {  // an opened model first traces its own default probe
    const std::vector<int> probe = std::exchange(restoredProbe_, {});
    if (trace->trace.tokens != probe) return panes_[0]->session()->setProbe(probe);
  }
  const QString note = probeNote();
  probeNote_->setText(note);
  probeNote_->setVisible(!note.isEmpty());
  if (note.isEmpty()) {
    const std::vector<int>& tokens = trace->trace.tokens;
    if (index == 0 && tokens != sharedProbe_) {
      sharedProbe_ = tokens;
      for (size_t i = 1; i < panes_.size(); ++i) {
        const TraceSnapshot* other = panes_[i]->attention()->snapshot();
        if (other && other->trace.tokens != sharedProbe_) panes_[i]->session()->setProbe(sharedProbe_);
      }
    } else if (index != 0 && !sharedProbe_.empty() && tokens != sharedProbe_) {
      panes_[index]->session()->setProbe(sharedProbe_);
    }
  }
  if (panes_[index]->watching()) evaluateMetrics(index);  // a watched run's new checkpoint (it never runs here)
  checkCapture();
}

QString ComparisonWindow::watchRunFolder(int index, const QString& dir) {
  if (index < 0 || index >= paneCount()) return tr("there is no run %1 in this comparison").arg(index + 1);
  const QString why = panes_[index]->watch(dir);
  if (why.isEmpty() && panes_[index]->session()->state() == TrainingSession::State::Running)
    panes_[index]->session()->reset();  // its own training ends (the checkpoint opens after this, on the UI thread)
  statusBar()->showMessage(why.isEmpty() ? tr("Run %1 follows %2").arg(index + 1).arg(QDir::toNativeSeparators(dir)) : why);
  return why;
}

void ComparisonWindow::watchWithDialog(int index) {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Watch a run folder in run %1").arg(index + 1));
  if (dir.isEmpty()) return;
  if (const QString why = watchRunFolder(index, dir); !why.isEmpty()) QMessageBox::warning(this, tr("Watch Run Folder"), why);
}

void ComparisonWindow::updateNotes() {
  for (ComparisonPane* pane : panes_) pane->setNote(link_->note(pane->selection()));
}

void ComparisonWindow::syncSelectionPickers() {
  auto sync = [](QComboBox* picker, int count, int current) {
    const QSignalBlocker quiet(picker);
    if (picker->count() != count) {
      picker->clear();
      for (int i = 0; i < count; ++i) picker->addItem(QString::number(i + 1));
    }
    picker->setCurrentIndex(count > 0 ? std::min(current, count - 1) : -1);
    picker->setEnabled(count > 0);
  };
  sync(layerPicker_, link_->maxLayers(), link_->layer());
  sync(headPicker_, link_->maxHeads(link_->layer()), link_->head());
  updateNotes();
}

// ---- screenshots ---------------------------------------------------------------------------

void ComparisonWindow::captureAfterSteps(int steps, const QString& file) {
  capture_ = {steps, file, false};
  for (ComparisonPane* pane : panes_) pane->session()->setPauseAtStep(steps);
}

void ComparisonWindow::checkCapture() {
  if (capture_.step == 0) return;
  if (!capture_.evaluating) {
    for (ComparisonPane* pane : panes_) {
      const int target = pane->modelFolder().isEmpty() ? std::min(capture_.step, pane->config().train.steps) : 0;
      if (pane->tracedStep() < target || pane->session()->state() == TrainingSession::State::Running) return;
    }
    capture_.evaluating = true;
    for (int i = 0; i < paneCount(); ++i) evaluateMetrics(i);
  }
  if (metrics_->busy()) return;
  capture_.step = 0;
  QTimer::singleShot(kCaptureSettleMs, this, [this] {
    if (capture_.file.isEmpty()) return emit captureFinished(true, tr("every run reached its step"));
    if (!grab().save(capture_.file)) return emit captureFinished(false, tr("could not write the screenshot to %1").arg(capture_.file));
    emit captureFinished(true, tr("saved %1").arg(capture_.file));
  });
}

// ---- files ---------------------------------------------------------------------------------

ComparisonDocument ComparisonWindow::documentFor(const QString& file) const {
  ComparisonDocument d;
  const QString runs = QFileInfo(file).completeBaseName() + QStringLiteral(".runs");
  for (ComparisonPane* pane : panes_) {
    ComparisonRun run;
    run.config = pane->config();
    run.config.train.threads = originalThreads_[pane->index()];
    if (!pane->modelFolder().isEmpty()) run.model_folder = QDir(pane->modelFolder()).absolutePath().toStdString();
    else if (pane->session()->hasExperiment()) run.checkpoint = QStringLiteral("%1/run-%2").arg(runs).arg(pane->index() + 1).toStdString();
    d.runs.push_back(std::move(run));
  }
  d.view = viewKinds()[viewKind_].id.toStdString();
  d.columns = columns_;
  d.oneAfterAnother = oneAfterAnother_;
  d.probe = sharedProbe_;
  d.layer = link_->layer();
  d.head = link_->head();
  d.policy = metrics_->policy().toStdString();
  d.budget = metrics_->budget().toStdString();
  return d;
}

void ComparisonWindow::saveAs(const QString& file) {
  if (pendingSave_) return emit savedAs(file, tr("a save is still in progress"));
  pendingSave_ = std::make_unique<PendingSave>();
  pendingSave_->file = file;
  pendingSave_->document = documentFor(file);
  const QDir folder = QFileInfo(file).absoluteDir();
  std::vector<std::pair<ComparisonPane*, QString>> saves;
  for (size_t i = 0; i < panes_.size(); ++i) {
    const std::string& checkpoint = pendingSave_->document.runs[i].checkpoint;
    if (checkpoint.empty()) continue;
    const QString dir = folder.filePath(QString::fromStdString(checkpoint));
    pendingSave_->waiting << dir;
    saves.push_back({panes_[i], dir});
  }
  if (saves.empty()) return finishSave();
  statusBar()->showMessage(tr("Saving %1 runs\u2026").arg(saves.size()));
  for (const auto& [pane, dir] : saves) pane->session()->save(dir);  // may report at once
}

void ComparisonWindow::finishSave() {
  const std::unique_ptr<PendingSave> save = std::move(pendingSave_);
  QString error = save->errors.join(QStringLiteral("; "));
  if (error.isEmpty()) error = QString::fromStdString(writeComparisonFile(save->file.toStdString(), save->document));
  statusBar()->showMessage(error.isEmpty() ? tr("Saved %1").arg(QDir::toNativeSeparators(save->file))
                                           : tr("Could not save the comparison: %1").arg(error));
  emit savedAs(save->file, error);
}

void ComparisonWindow::saveWithDialog() {
  QString file = QFileDialog::getSaveFileName(this, tr("Save comparison"), QString(),
                                              tr("Comparisons (*.%1)").arg(QLatin1String(kFileSuffix)));
  if (file.isEmpty()) return;
  if (!file.endsWith(QLatin1Char('.') + QLatin1String(kFileSuffix))) file += QLatin1Char('.') + QLatin1String(kFileSuffix);
  connect(this, &ComparisonWindow::savedAs, this, [this](const QString&, const QString& error) {
    if (!error.isEmpty()) QMessageBox::warning(this, tr("Could not save the comparison"), error);
  }, Qt::SingleShotConnection);
  saveAs(file);
}

void ComparisonWindow::openWithDialog() { openComparisonWithDialog(this); }

void openComparisonWithDialog(QWidget* parent) {
  const QString file = QFileDialog::getOpenFileName(parent, QObject::tr("Open comparison"), QString(),
                                                    QObject::tr("Comparisons (*.%1)").arg(QLatin1String(ComparisonWindow::kFileSuffix)));
  if (file.isEmpty()) return;
  QString error;
  ComparisonWindow* window = ComparisonWindow::open(file, error);
  if (!window) {
    QMessageBox::warning(parent, QObject::tr("Could not open the comparison"),
                         QObject::tr("%1 cannot be opened:\n\n%2\n\nNothing was changed.").arg(QDir::toNativeSeparators(file), error));
    return;
  }
  window->setAttribute(Qt::WA_DeleteOnClose);
  window->show();
}

void newComparisonWithDialog(const ExperimentConfig& current, QWidget* parent) {
  NewComparisonDialog dialog(current, parent);
  if (dialog.exec() != QDialog::Accepted) return;
  ComparisonWindow* window = comparisonFromDialog(dialog);
  window->setAttribute(Qt::WA_DeleteOnClose);
  window->show();
}

void ComparisonWindow::openTrainedRun(int index, std::unique_ptr<Trainer> trainer) {
  savedSteps_[index] = trainer->stepsDone();
  panes_[index]->session()->open(std::move(trainer));
}

ComparisonWindow* comparisonFromDialog(NewComparisonDialog& dialog) {
  auto* window = new ComparisonWindow(dialog.chosen(), nullptr, dialog.chosenFolders());
  std::vector<std::unique_ptr<Trainer>> trainers = dialog.takeChosenTrainers();
  for (size_t i = 0; i < trainers.size(); ++i)
    if (trainers[i]) window->openTrainedRun(static_cast<int>(i), std::move(trainers[i]));
  return window;
}

ComparisonWindow* ComparisonWindow::open(const QString& file, QString& error) {
  ComparisonDocument document;
  if (const std::string why = readComparisonFile(file.toStdString(), document); !why.empty()) {
    error = QString::fromStdString(why);
    return nullptr;
  }
  const QDir folder = QFileInfo(file).absoluteDir();
  std::vector<ExperimentConfig> configs;
  std::vector<std::unique_ptr<Trainer>> trainers;
  QStringList modelFolders;
  for (size_t i = 0; i < document.runs.size(); ++i) {
    const ComparisonRun& run = document.runs[i];
    configs.push_back(run.config);
    trainers.emplace_back();
    modelFolders << (run.model_folder.empty() ? QString() : folder.filePath(QString::fromStdString(run.model_folder)));
    if (!modelFolders.back().isEmpty() && !QFileInfo(modelFolders.back()).isDir()) {
      error = tr("run %1: the model folder %2 is not there (moved or deleted?)").arg(i + 1).arg(QDir::toNativeSeparators(modelFolders.back()));
      return nullptr;
    }
    if (run.checkpoint.empty()) continue;
    LoadedCheckpoint loaded;
    if (const std::string why = loadCheckpoint(folder.filePath(QString::fromStdString(run.checkpoint)).toStdString(), loaded);
        !why.empty()) {
      error = tr("run %1: %2").arg(i + 1).arg(QString::fromStdString(why));
      return nullptr;
    }
    configs.back() = loaded.config;
    trainers.back() = std::move(loaded.trainer);
  }
  if (viewKindIndex(QString::fromStdString(document.view)) < 0) document.view = "attention";
  auto* window = new ComparisonWindow(configs, nullptr, modelFolders);
  for (size_t i = 0; i < trainers.size(); ++i) {
    window->originalThreads_[i] = document.runs[i].config.train.threads;
    if (trainers[i]) window->openTrainedRun(static_cast<int>(i), std::move(trainers[i]));
  }
  window->applyDocument(document);
  window->setWindowTitle(tr("%1 \u2014 Attention Lab").arg(QFileInfo(file).fileName()));
  return window;
}

void ComparisonWindow::applyDocument(const ComparisonDocument& d) {
  setViewKind(viewKindIndex(QString::fromStdString(d.view)));
  columns_ = d.columns;
  layoutGrid();
  setOneAfterAnother(d.oneAfterAnother);
  setEviction(QString::fromStdString(d.policy), QString::fromStdString(d.budget));
  link_->select(d.layer, d.head);
  sharedProbe_ = d.probe;
  if (!d.probe.empty() && !panes_.front()->modelFolder().isEmpty()) restoredProbe_ = d.probe;
  if (!d.probe.empty())
    for (ComparisonPane* pane : panes_)
      if (pane->session()->hasExperiment()) pane->session()->setProbe(d.probe);
}

bool ComparisonWindow::hasUnsavedSteps() const {
  for (ComparisonPane* pane : panes_)
    if (pane->session()->hasExperiment() && pane->progress().step > savedSteps_[pane->index()]) return true;
  return false;
}

void ComparisonWindow::closeEvent(QCloseEvent* event) {
  if (hasUnsavedSteps() &&
      QMessageBox::question(this, tr("Close the comparison?"),
                            tr("Some runs have trained steps that are not saved (Save comparison keeps them). Close and lose them?"),
                            QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Cancel) != QMessageBox::Discard) {
    event->ignore();
    return;
  }
  for (ComparisonPane* pane : panes_) pane->session()->reset();
  event->accept();
}

}  // namespace attnlab
