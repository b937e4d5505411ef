#include "kv_cache_view.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QLineSeries>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QTextStream>
#include <QToolButton>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "head_selection.h"
#include "kv_cache_model.h"
#include "kv_occupancy_raster.h"
#include "policy_picker.h"
#include "kv/eviction_policy.h"
#include "study_report.h"
#include "palette.h"

namespace attnlab {

namespace {

const char* kDefaultPolicy = "streaming_llm";
const char* kDefaultGatedPolicy = "learned_gate";  // a model with a retention gate: what its gate keeps
const char* kDefaultBudget = "8";
constexpr int kFollowMs = 250;    // at least this long between runs that follow training
constexpr int kBusyDelayMs = 300;
const QStringList kDefaultComparisons = {QStringLiteral("h2o"), QStringLiteral("full")};

QChartView* makeChart(const QString& title, QWidget* parent) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(170);
  return view;
}

QString cellStateKey(CellState s) {
  switch (s) {
    case CellState::NotYet: return QStringLiteral("not_yet");
    case CellState::Live: return QStringLiteral("live");
    case CellState::Sink: return QStringLiteral("sink");
    case CellState::KeptRecent: return QStringLiteral("kept_recent");
    case CellState::KeptByGate: return QStringLiteral("kept_by_gate");
    case CellState::EvictedNow: return QStringLiteral("evicted_now");
    case CellState::EvictedEarlier: return QStringLiteral("evicted_earlier");
  }
  return {};
}

}  // namespace

// Keeps a menu of checkable entries open while they are toggled, so several are picked at once.
class StayOpenMenu : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override {
    auto* menu = qobject_cast<QMenu*>(watched);
    if (!menu || event->type() != QEvent::MouseButtonRelease) return false;
    QAction* action = menu->activeAction();
    if (!action || !action->isCheckable()) return false;
    action->trigger();
    return true;
  }
};

KvCacheView::KvCacheView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), attention_(context.attention), link_(context.kvLink), selection_(context.selection), model_(new KvCacheModel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addWidget(buildPanel());

  results_ = new QWidget(this);
  auto* splitter = splitter_ = new QSplitter(Qt::Horizontal, results_);
  auto* left = new QWidget(splitter);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  auto* pick = new QHBoxLayout;
  headLabel_ = new QLabel(left);
  runPicker_ = new QComboBox(left);
  runPicker_->setToolTip(tr("Which run's raster to show"));
  runPicker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  pick->addWidget(headLabel_, 1);
  pick->addWidget(new QLabel(tr("Raster of:"), left));
  pick->addWidget(runPicker_);
  leftLayout->addLayout(pick);
  raster_ = new KvOccupancyRaster(left);
  raster_->setEmptyText(tr("Train a few steps (or open a model), then press Run to generate through the KV cache."));
  leftLayout->addWidget(raster_, 1);
  auto* right = new QWidget(splitter);
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  liveChart_ = makeChart(tr("Live KV entries per step (all layers and KV heads)"), right);
  bytesChart_ = makeChart(tr("KV cache bytes per step"), right);
  lossChart_ = makeChart(tr("Loss of the known next token per position (teacher-forced)"), right);
  rightLayout->addWidget(liveChart_);
  rightLayout->addWidget(bytesChart_);
  rightLayout->addWidget(lossChart_);
  right->setMinimumWidth(380);
  splitter->setStretchFactor(0, 1);  // the raster is square: extra width goes to the charts as much as to it
  splitter->setStretchFactor(1, 1);
  connect(splitter, &QSplitter::splitterMoved, this, [this] { splitterMoved_ = true; });
  auto* resultsLayout = new QVBoxLayout(results_);
  resultsLayout->setContentsMargins(0, 0, 0, 0);
  resultsLayout->addWidget(splitter);
  layout->addWidget(results_, 1);

  setContextMenuPolicy(Qt::CustomContextMenu);
  connect(this, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
    QMenu menu;
    addExportActions(&menu, *this, this);
    menu.exec(mapToGlobal(at));
  });
  connect(model_, &KvCacheModel::resultChanged, this, &KvCacheView::showResult);
  connect(model_, &KvCacheModel::failed, this, [this](const QString& why) {
    message_->setStyleSheet(QStringLiteral("color: #b00020"));
    message_->setText(why);
  });
  // the busy bar only for runs long enough to notice (following training runs often and briefly)
  auto* showBusy = new QTimer(this);
  showBusy->setSingleShot(true);
  connect(showBusy, &QTimer::timeout, this, [this] { busy_->setVisible(model_->busy()); });
  connect(model_, &KvCacheModel::busyChanged, this, [this, showBusy](bool busy) {
    if (busy) return showBusy->start(kBusyDelayMs);
    lastRunMs_ = sinceRun_.elapsed();
    busy_->setVisible(false);
  });
  connect(runPicker_, &QComboBox::currentIndexChanged, this, &KvCacheView::showSelection);
  // the attention maps mark what the picked run had evicted, while the probe is its prompt
  connect(runPicker_, &QComboBox::currentIndexChanged, this, [this](int run) {
    if (attention_) attention_->setEvictions(model_->result(), run);
  });
  connect(attention_, &AttentionMapModel::mapChanged, this, &KvCacheView::followSnapshot);
  if (link_) {  // a comparison's views share one policy: start on the one chosen so far
    connect(link_, &KvPolicyLink::chosen, this, [this](const EvictionChoice& choice, const QObject* from) {
      if (from != this) takeChoice(choice);
    });
    if (!link_->choice().policy.isEmpty()) takeChoice(link_->choice());
  }
  connect(selection_, &HeadSelection::headChanged, this, &KvCacheView::showSelection);
  followSnapshot();
}

QWidget* KvCacheView::buildPanel() {
  auto* panel = new QWidget(this);
  // two rows: what to generate, then what to compare and run (one row would widen the window)
  auto* rows = new QVBoxLayout(panel);
  rows->setContentsMargins(0, 0, 0, 0);
  auto* generation = new QHBoxLayout;
  auto* comparison = new QHBoxLayout;
  auto add = [&](QHBoxLayout* row, const QString& label, QWidget* w) {
    if (!label.isEmpty()) row->addWidget(new QLabel(label, panel));
    row->addWidget(w);
  };

  promptSource_ = new QComboBox(panel);
  promptSource_->addItems({tr("the probe"), tr("a task example"), tr("text:")});
  promptSource_->setToolTip(tr("What is decoded before the new tokens: the probe above, a validation example of the task (its "
                               "answers give the loss), or the text typed beside"));
  promptText_ = new QLineEdit(panel);
  promptText_->setPlaceholderText(tr("tokens of the task's vocabulary"));
  promptText_->setEnabled(false);
  promptText_->setMinimumWidth(180);
  connect(promptSource_, &QComboBox::currentIndexChanged, this, [this](int i) { promptText_->setEnabled(i == 2); });
  connect(promptText_, &QLineEdit::returnPressed, this, &KvCacheView::run);
  tokens_ = new QSpinBox(panel);
  tokens_->setRange(0, 4096);
  tokens_->setValue(8);
  tokens_->setToolTip(tr("Greedy new tokens after the prompt (the prompt is cut to leave them room in the model's context)"));
  policy_ = new QComboBox(panel);
  for (const auto& [name, summary] : KvCacheModel::policies()) {
    policy_->addItem(name);
    policy_->setItemData(policy_->count() - 1, summary, Qt::ToolTipRole);
  }
  policy_->setCurrentText(QString::fromLatin1(kDefaultPolicy));
  connect(policy_, &QComboBox::activated, this, [this] {
    policyChosen_ = true;
    publishChoice();
  });
  policy_->setToolTip(tr("The eviction policy (hover an entry for its rule)"));
  policy_->setObjectName(QStringLiteral("kvPolicy"));
  policySettings_ = new QWidget(panel);
  policySettings_->setObjectName(QStringLiteral("policySettings"));
  policySettings_->setLayout(new QHBoxLayout);
  policySettings_->layout()->setContentsMargins(0, 0, 0, 0);
  connect(policy_, &QComboBox::currentIndexChanged, this, &KvCacheView::showPolicySettings);
  showPolicySettings();
  budget_ = new QLineEdit(QString::fromLatin1(kDefaultBudget), panel);
  budget_->setMaximumWidth(70);
  budget_->setObjectName(QStringLiteral("kvBudget"));
  budget_->setToolTip(tr("Entries each KV head keeps: a count (32) or a share of the positions seen (25%). Empty: no budget "
                         "(full; learned_gate by its threshold)"));
  connect(budget_, &QLineEdit::returnPressed, this, &KvCacheView::run);
  connect(budget_, &QLineEdit::editingFinished, this, &KvCacheView::publishChoice);
  scope_ = new QComboBox(panel);
  scope_->addItems({QStringLiteral("head"), QStringLiteral("layer")});
  connect(scope_, &QComboBox::activated, this, &KvCacheView::publishChoice);
  scope_->setToolTip(tr("head: every KV head keeps the budget; layer: a layer's KV heads share budget x heads entries by score"));

  compare_ = new QToolButton(panel);
  compare_->setText(tr("Compare with"));
  compare_->setPopupMode(QToolButton::InstantPopup);
  compare_->setToolTip(tr("Extra policies run on the same prompt, drawn as more lines in the charts"));
  auto* menu = new QMenu(compare_);
  for (const auto& [name, summary] : KvCacheModel::policies()) {
    QAction* action = menu->addAction(name);
    action->setCheckable(true);
    action->setChecked(kDefaultComparisons.contains(name));
    action->setToolTip(summary);
  }
  menu->setToolTipsVisible(true);
  menu->installEventFilter(new StayOpenMenu(menu));
  compare_->setMenu(menu);
  auto countCompared = [this, menu] {
    int n = 0;
    for (QAction* a : menu->actions()) n += a->isChecked();
    compare_->setText(n ? tr("Compare with (%1)").arg(n) : tr("Compare with"));
  };
  countCompared();
  for (QAction* a : menu->actions()) connect(a, &QAction::toggled, this, countCompared);  // also when unticked as refused
  matched_ = new QCheckBox(tr("matched live cache"), panel);
  matched_->setObjectName(QStringLiteral("matchedProtocol"));
  matched_->setToolTip(tr("Matched live-cache protocol: every compared policy keeps, at every step, layer and KV head, exactly as "
                          "many entries as the first policy kept (full still keeps everything)"));
  follow_ = new QCheckBox(tr("follow training"), panel);
  follow_->setChecked(true);
  follow_->setToolTip(tr("While this view is shown, run again when the model trains on or the probe changes"));
  followTimer_ = new QTimer(this);
  followTimer_->setSingleShot(true);
  connect(followTimer_, &QTimer::timeout, this, [this] {
    if (isVisible() && follow_->isChecked() && outdated()) run();
  });
  runButton_ = new QPushButton(tr("Run"), panel);
  runButton_->setDefault(true);
  connect(runButton_, &QPushButton::clicked, this, &KvCacheView::run);
  busy_ = new QProgressBar(panel);
  busy_->setRange(0, 0);
  busy_->setMaximumWidth(80);
  busy_->setVisible(false);
  auto* report = new QPushButton(tr("Open study report..."), panel);
  report->setToolTip(tr("Browse a folder written by 'attnlab-cli study live-cache' (e.g. docs/reports/live-cache)"));
  connect(report, &QPushButton::clicked, this, &KvCacheView::openStudyReport);

  // a changed setting runs again at once (once the view has run), typed text on Enter
  auto rerun = [this] {
    if (autoRunDone_ && isVisible()) run();
  };
  connect(promptSource_, &QComboBox::currentIndexChanged, this, [this, rerun](int i) {
    if (i != 2 || !promptText_->text().isEmpty()) rerun();
  });
  connect(tokens_, &QSpinBox::valueChanged, this, rerun);
  connect(policy_, &QComboBox::currentIndexChanged, this, rerun);
  connect(scope_, &QComboBox::currentIndexChanged, this, rerun);
  connect(matched_, &QCheckBox::toggled, this, rerun);
  connect(menu, &QMenu::triggered, this, rerun);
  add(generation, tr("Prompt"), promptSource_);
  add(generation, {}, promptText_);
  add(generation, tr("New tokens"), tokens_);
  add(generation, tr("Policy"), policy_);
  add(generation, tr("Budget"), budget_);
  add(generation, tr("per"), scope_);
  generation->addStretch(1);
  add(comparison, {}, compare_);
  add(comparison, {}, matched_);
  add(comparison, {}, follow_);
  add(comparison, {}, runButton_);
  add(comparison, {}, busy_);
  comparison->addStretch(1);
  add(comparison, {}, report);
  rows->addLayout(generation);
  rows->addWidget(policySettings_);  // a row of its own, so the view stays narrow enough for small screens
  rows->addLayout(comparison);
  message_ = new QLabel(panel);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  rows->addWidget(message_);
  return panel;
}

void KvCacheView::settle() {
  model_->waitForIdle();
  QCoreApplication::processEvents();
}

void KvCacheView::run() {
  const TraceSnapshot* snapshot = attention_->snapshot();
  KvCacheRequest request;
  if (snapshot) {
    request.model = snapshot->model;
    request.probe = snapshot->trace.tokens;
    ranStep_ = snapshot->model ? snapshot->model->step : -1;
    ranProbe_ = snapshot->trace.tokens;
  }
  request.prompt = static_cast<KvCacheRequest::Prompt>(promptSource_->currentIndex());
  request.text = promptText_->text();
  request.tokens = tokens_->value();
  request.matched = matched_->isChecked();
  const std::string scope = scope_->currentText().toStdString();
  const std::string budget = budget_->text().trimmed().toStdString();
  const std::string main = policy_->currentText().toStdString();
  request.runs.push_back({main, isDenseReferencePolicy(main) ? std::string() : budget, scope, settingsByPolicy_[policy_->currentText()]});
  for (QAction* action : compare_->menu()->actions()) {
    if (!action->isChecked() || action->text() == policy_->currentText()) continue;
    const std::string name = action->text().toStdString();
    // at the same budget (the dense reference never takes one, and under the matched protocol the counts
    // replace it), with the settings the user gave this policy when it was the main one
    const auto settings = settingsByPolicy_.find(action->text());
    request.runs.push_back({name, isDenseReferencePolicy(name) || request.matched ? std::string() : budget, scope,
                            settings == settingsByPolicy_.end() ? Settings{} : settings->second});
  }
  message_->setStyleSheet({});
  if (!model_->result()) message_->setText(tr("generating..."));
  autoRunDone_ = true;
  sinceRun_.start();
  model_->run(request);
}

QString KvCacheView::setEviction(const QString& policy, const QString& budget) {
  if (policy_->findText(policy) < 0) return tr("unknown eviction policy '%1'").arg(policy);
  policyChosen_ = true;
  budget_->setText(budget);
  policy_->setCurrentText(policy);
  if (isVisible()) run();
  return {};
}

void KvCacheView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  maybeAutoRun();
}

void KvCacheView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitSplitter();
}

void KvCacheView::fitSplitter() {
  if (splitterMoved_) return;
  const int total = splitter_->width(), rasterSide = splitter_->height() - 90;  // less the head line and legend
  const int left = std::clamp(rasterSide + 150, total / 3, std::max(total / 3, total - 420));  // plus the token labels
  splitter_->setSizes({left, total - left});
}

EvictionChoice KvCacheView::choice() const {
  const auto settings = settingsByPolicy_.find(policy_->currentText());
  return {policy_->currentText(), budget_->text().trimmed(), scope_->currentText(),
          settings == settingsByPolicy_.end() ? Settings{} : settings->second};
}

void KvCacheView::publishChoice() {
  if (link_ && !takingChoice_) link_->publish(choice(), this);
}

void KvCacheView::takeChoice(const EvictionChoice& choice) {
  if (choice == this->choice() || policy_->findText(choice.policy) < 0) return;
  takingChoice_ = true;
  policyChosen_ = true;
  settingsByPolicy_[choice.policy] = choice.settings;
  budget_->setText(choice.budget);
  scope_->setCurrentText(choice.scope);
  if (policy_->currentText() != choice.policy) policy_->setCurrentText(choice.policy);  // rebuilds the editors
  else showPolicySettings();
  takingChoice_ = false;
  if (autoRunDone_ && isVisible()) run();
}

void KvCacheView::showPolicySettings() {
  QLayout* row = policySettings_->layout();
  while (QLayoutItem* item = row->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  const QString policy = policy_->currentText();
  const std::vector<SettingSpec> specs = KvCacheModel::policySettings(policy);
  policySettings_->setVisible(!specs.empty());
  if (!specs.empty()) row->addWidget(new QLabel(tr("Settings of %1:").arg(policy), policySettings_));
  for (const SettingSpec& spec : specs) {
    const QString key = QString::fromStdString(spec.key);
    auto* label = new QLabel(key, policySettings_);
    auto* field = new QDoubleSpinBox(policySettings_);
    field->setObjectName(QStringLiteral("policySetting.") + key);
    field->setDecimals(spec.integer ? 0 : 2);
    field->setSingleStep(spec.integer ? 1 : 0.05);
    field->setRange(spec.min, std::min(spec.max, 1e6));
    field->setValue(settingOr(settingsByPolicy_[policy], spec));
    const QString help = QString::fromStdString(spec.help) + tr(" (from %1 to %2; default %3)").arg(spec.min).arg(spec.max).arg(spec.defaultValue);
    label->setToolTip(help);
    field->setToolTip(help);
    field->setKeyboardTracking(false);  // one run per finished edit, not per keystroke
    connect(field, &QDoubleSpinBox::valueChanged, this, [this, policy, key = spec.key](double value) {
      settingsByPolicy_[policy][key] = value;
      publishChoice();
      if (autoRunDone_ && isVisible()) run();
    });
    row->addWidget(label);
    row->addWidget(field);
  }
  static_cast<QHBoxLayout*>(row)->addStretch(1);
}

void KvCacheView::followSnapshot() {
  const TraceSnapshot* snapshot = attention_->snapshot();
  const RunData* run = snapshot && snapshot->model ? snapshot->model->run.get() : nullptr;
  if (run != shownRun_) {  // a new experiment: the old generation no longer applies
    shownRun_ = run;
    autoRunDone_ = false;
    if (model_->result()) model_->clear();
    if (run) tokens_->setMaximum(std::max(0, run->config.model.context - 1));
    if (run) offerUsablePolicies(run->config.model);
    if (run && !policyChosen_)
      policy_->setCurrentText(QString::fromLatin1(run->config.model.retention_gate ? kDefaultGatedPolicy : kDefaultPolicy));
  }
  maybeAutoRun();
  showSelection();
}

void KvCacheView::offerUsablePolicies(const ModelConfig& model) {
  const std::vector<const ModelConfig*> models{&model};
  markUsablePolicies(policy_, models);
  for (QAction* a : compare_->menu()->actions()) markUsablePolicy(a, models);
  if (!policyRefusal(policy_->currentText(), models).isEmpty()) {  // chosen for an earlier model
    policy_->setCurrentText(QString::fromLatin1(kDefaultPolicy));
    publishChoice();
  }
}

bool KvCacheView::outdated() const {
  const TraceSnapshot* snapshot = attention_->snapshot();
  return snapshot && snapshot->model && (snapshot->model->step != ranStep_ || snapshot->trace.tokens != ranProbe_);
}

void KvCacheView::maybeAutoRun() {
  if (!isVisible() || !shownRun_) return;
  if (!autoRunDone_) return run();
  if (follow_->isChecked() && outdated() && !followTimer_->isActive())
    // never more than a third of the time on generation: a long run waits in proportion
    followTimer_->start(static_cast<int>(std::max<qint64>(0, std::max<qint64>(kFollowMs, 3 * lastRunMs_) - sinceRun_.elapsed())));
}

int KvCacheView::shownLayer() const { return selection_->layer(); }

int KvCacheView::shownKvHead() const {
  const auto result = model_->result();
  return result ? selection_->head() / result->record.group : 0;
}

void KvCacheView::showResult() {
  const auto result = model_->result();
  const int previous = runPicker_->currentIndex();
  {
    const QSignalBlocker block(runPicker_);
    runPicker_->clear();
    if (result)
      for (const OccupancyRun& run : result->record.runs) runPicker_->addItem(QString::fromStdString(run.label()));
    runPicker_->setCurrentIndex(previous >= 0 && previous < runPicker_->count() ? previous : 0);
  }
  if (attention_) attention_->setEvictions(result, runPicker_->currentIndex());
  if (result) {
    const OccupancyRecord& r = result->record;
    QString text = tr("%1: %2 prompt + %3 generated tokens, %4 bytes per entry (K and V of one KV head).")
                       .arg(result->openedName.isEmpty() ? tr("Model at step %1").arg(result->modelStep) : result->openedName)
                       .arg(r.promptLength).arg(r.steps - r.promptLength).arg(r.bytesPerEntry);
    if (!result->note.isEmpty()) text += QLatin1Char(' ') + result->note + QLatin1Char('.');
    QStringList generated;
    for (size_t i = 0; i < r.runs.size(); ++i)
      generated << QStringLiteral("%1 \u2192 \u201c%2\u201d").arg(QString::fromStdString(r.runs[i].spec.policy),
                                                                   result->tokenText[i].mid(r.promptLength).join(QLatin1Char(' ')));
    if (r.steps > r.promptLength) text += tr(" Generated: ") + generated.join(QStringLiteral("; "));
    message_->setStyleSheet({});
    message_->setText(text);
  }
  showSelection();
  redrawCharts();
}

void KvCacheView::showSelection() {
  const auto result = model_->result();
  if (!result) {
    headLabel_->setText(shownRun_ ? tr("No generation yet") : tr("No model yet"));
    raster_->show(nullptr, 0, 0, 0);
    return;
  }
  const OccupancyRecord& r = result->record;
  const int layer = std::min(shownLayer(), r.layers - 1), head = selection_->head();
  const int kvHead = std::min(shownKvHead(), r.kvHeads - 1);
  QString label = tr("Layer %1, head %2").arg(layer + 1).arg(head + 1);  // 1-based, as the selection bar
  if (r.group > 1)
    label += tr(" (KV head %1, shared by heads %2\u2013%3)").arg(kvHead + 1).arg(kvHead * r.group + 1).arg(kvHead * r.group + r.group);
  headLabel_->setText(QStringLiteral("<b>%1</b>").arg(label));
  if (!r.cachesLayer[layer]) {
    const auto& run = r.runs[std::max(0, runPicker_->currentIndex())];
    raster_->setEmptyText(tr("Layer %1 decodes from a constant-size state (linear attention or DeltaNet, %2 bytes in all such "
                               "layers): it keeps no KV cache to evict from. Select a softmax-family layer.")
                                .arg(layer + 1).arg(run.stateBytes));
    raster_->show(nullptr, 0, 0, 0);
    return;
  }
  raster_->show(result, std::max(0, runPicker_->currentIndex()), layer, kvHead);
}

void KvCacheView::redrawCharts() {
  const auto result = model_->result();
  for (QChartView* view : {liveChart_, bytesChart_, lossChart_}) {
    QChart* chart = view->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes()) {
      chart->removeAxis(axis);
      delete axis;
    }
  }
  if (!result) return;
  const OccupancyRecord& r = result->record;
  bool anyLoss = false;
  double maxLoss = 0;
  for (const OccupancyRun& run : r.runs)
    for (double v : run.loss)
      if (std::isfinite(v)) {
        anyLoss = true;
        maxLoss = std::max(maxLoss, v);
      }
  auto axes = [&](QChartView* view, const QString& x, const QString& y, double top) {
    auto* ax = new QValueAxis;
    ax->setTitleText(x);
    ax->setRange(0, std::max(1, r.steps - 1));
    ax->setTickType(QValueAxis::TicksDynamic);  // whole steps, about six labels, the range kept exact
    ax->setTickAnchor(0);
    double interval = 1;
    while ((r.steps - 1) / interval > 7) interval *= (QString::number(interval).startsWith('2') ? 2.5 : 2);
    ax->setTickInterval(interval);
    ax->setLabelFormat(QStringLiteral("%d"));
    auto* ay = new QValueAxis;
    ay->setTitleText(y);
    ay->setRange(0, top > 0 ? top * 1.08 : 1);
    ay->applyNiceNumbers();
    ay->setLabelFormat(y == tr("loss (nats)") ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
    view->chart()->addAxis(ax, Qt::AlignBottom);
    view->chart()->addAxis(ay, Qt::AlignLeft);
    for (QAbstractSeries* s : view->chart()->series()) {
      s->attachAxis(ax);
      s->attachAxis(ay);
    }
  };
  double maxLive = 0, maxBytes = 0;
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const OccupancyRun& run = r.runs[i];
    const QString name = QString::fromStdString(run.label());
    // earlier runs drawn wider, so a run that keeps the same counts as another still shows beneath it
    QPen pen(categoryColor(static_cast<int>(i)), 1.5 + static_cast<double>(r.runs.size() - 1 - i));
    if (run.dense) pen.setStyle(Qt::DashLine);
    auto* live = new QLineSeries;
    auto* bytes = new QLineSeries;
    auto* loss = new QLineSeries;
    for (auto* s : {live, bytes, loss}) {
      s->setName(name);
      s->setPen(pen);
    }
    for (int t = 0; t < r.steps; ++t) {
      live->append(t, run.liveEntries[t]);
      bytes->append(t, static_cast<double>(run.bytes[t]));
      if (std::isfinite(run.loss[t])) loss->append(t, run.loss[t]);
      maxLive = std::max<double>(maxLive, run.liveEntries[t]);
      maxBytes = std::max<double>(maxBytes, static_cast<double>(run.bytes[t]));
    }
    liveChart_->chart()->addSeries(live);
    bytesChart_->chart()->addSeries(bytes);
    lossChart_->chart()->addSeries(loss);
  }
  axes(liveChart_, tr("step"), tr("live entries"), maxLive);
  liveChart_->chart()->setTitle(r.runs.size() > 1 && r.runs.back().matched
                                    ? tr("Live KV entries per step (matched: the compared runs keep the first one's counts)")
                                    : tr("Live KV entries per step (all layers and KV heads)"));
  axes(bytesChart_, tr("step"), tr("bytes"), maxBytes);
  axes(lossChart_, tr("position"), tr("loss (nats)"), maxLoss);
  lossChart_->chart()->setTitle(anyLoss ? tr("Loss of the known next token per position (teacher-forced)")
                                        : tr("Loss per position: no known continuation"));
}

void KvCacheView::openStudyReport() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open a live-cache study report folder"));
  if (folder.isEmpty()) return;
  auto* dialog = new StudyReport(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  if (const QString why = dialog->load(folder); !why.isEmpty()) {
    delete dialog;
    QMessageBox::warning(this, tr("Study report"), why);
    return;
  }
  dialog->show();
}

QString KvCacheView::exportName() const {
  return QStringLiteral("kv-cache-%1-L%2-H%3").arg(policy_->currentText()).arg(shownLayer() + 1).arg(selection_->head() + 1);
}

QWidget* KvCacheView::exportWidget() {
  // a generation just started (the tab was shown for the export) is drawn, not its empty-state text,
  // once the charts have laid out their new axes
  if (model_->busy()) {
    model_->waitForIdle();
    fitSplitter();
    QCoreApplication::processEvents();
  }
  return results_;
}

bool KvCacheView::hasExportData() const { return model_->result() != nullptr; }

void KvCacheView::writeCsv(QTextStream& out) const {
  const auto result = model_->result();
  out << "run,policy,budget,kind,layer,kv_head,step,position,token,value,rule\n";
  if (!result) return;
  const OccupancyRecord& r = result->record;
  const int layer = std::min(shownLayer(), r.layers - 1), kvHead = std::min(shownKvHead(), r.kvHeads - 1);
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const OccupancyRun& run = r.runs[i];
    const QString prefix = QStringLiteral("%1,%2,%3,").arg(i).arg(csvField(QString::fromStdString(run.spec.policy)),
                                                             csvField(QString::fromStdString(run.budget)));
    const QStringList& text = result->tokenText[i];
    for (int t = 0; t < r.steps; ++t) {
      out << prefix << "live_entries,,," << t << ",," << csvField(text[t]) << "," << run.liveEntries[t] << ",\n";
      out << prefix << "bytes,,," << t << ",," << csvField(text[t]) << "," << run.bytes[t] << ",\n";
      if (std::isfinite(run.loss[t])) out << prefix << "loss,,," << t << ",," << csvField(text[t]) << "," << run.loss[t] << ",\n";
    }
    if (!r.cachesLayer[layer]) continue;
    const HeadRaster& h = r.raster(static_cast<int>(i), layer, kvHead);
    for (int t = 0; t < r.steps; ++t)
      for (int p = 0; p <= t; ++p) {
        const size_t c = r.cell(t, p);
        out << prefix << "cell," << layer + 1 << "," << kvHead + 1 << "," << t << "," << p << "," << csvField(text[p]) << ","
            << cellStateKey(h.cells[c]) << ","
            << (h.cells[c] == CellState::EvictedNow ? csvField(QString::fromStdString(run.rules[h.rule[c]])) : QString()) << "\n";
      }
  }
}

}  // namespace attnlab
