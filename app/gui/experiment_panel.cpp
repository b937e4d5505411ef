#include "experiment_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "attention/attention.h"
#include "core/available_memory.h"
#include "data/task.h"
#include "edited_experiment.h"
#include "io/config_json.h"
#include "model/gates.h"
#include "model/projection_sharing.h"
#include "number_field.h"
#include "positional/positional.h"
#include "settings_editor.h"
#include "train/memory_estimate.h"
#include "training_rate.h"
#include "wheel_guard.h"

namespace attnlab {

namespace {

// Edits are checked (validation, task, memory estimate) once typing pauses this long.
constexpr int kCheckDelayMs = 200;

QString q(const std::string& s) { return QString::fromStdString(s); }

QString bytesText(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) bytes /= 1024, ++unit;
  return QStringLiteral("%1 %2").arg(bytes, 0, 'f', unit == 0 ? 0 : 1).arg(QLatin1String(units[unit]));
}

// "45 ms", "2.4 s", "3 min 20 s", "2 h 05 min": as precise as an estimate deserves.
QString durationText(double seconds) {
  if (seconds < 1) return QStringLiteral("%1 ms").arg(std::max(1.0, seconds * 1000), 0, 'f', 0);
  if (seconds < 60) return QStringLiteral("%1 s").arg(seconds, 0, 'f', 1);
  const long long s = std::llround(seconds);
  if (s < 3600) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1 h %2 min").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0'));
}

// "a, b, c" as the engine spells its lists of names.
QStringList namesOf(const char* list) {
  QStringList names = QString::fromLatin1(list).split(QLatin1Char(','), Qt::SkipEmptyParts);
  for (QString& n : names) n = n.trimmed();
  return names;
}

std::string gateSummary(const std::string& name) {
  for (const GateInfo& g : gateCatalogue())
    if (g.name == name) return g.summary;
  return {};
}

void addChoice(QComboBox* box, const std::string& name, const std::string& summary) {
  box->addItem(q(name), q(name));
  box->setItemData(box->count() - 1, q(summary), Qt::ToolTipRole);
}

template <class Entries>
void addChoices(QComboBox* box, const Entries& entries) {
  for (const auto& e : entries) addChoice(box, e.name, e.summary);
}

QString choiceOf(const QComboBox* box) { return box->currentData().toString(); }

void choose(QComboBox* box, const std::string& name) {
  const int i = box->findData(q(name));
  box->setCurrentIndex(i >= 0 ? i : 0);
}

QLabel* captionLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont font = label->font();
  font.setPointSizeF(font.pointSizeF() * 0.9);
  label->setFont(font);
  label->setStyleSheet(QStringLiteral("color: #5f6368;"));
  return label;
}

QFormLayout* formOf(QGroupBox* box) {
  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::DontWrapRows);
  form->setLabelAlignment(Qt::AlignLeft);
  return form;
}

std::vector<SettingSpec> attentionSpecsOf(const QStringList& variants) {
  std::vector<SettingSpec> specs;
  std::set<std::string> seen;
  for (const QString& name : variants)
    if (auto variant = AttentionRegistry::instance().create(name.toStdString()))
      for (const SettingSpec& spec : variant->settingSpecs())
        if (seen.insert(spec.key).second) specs.push_back(spec);
  return specs;
}

}  // namespace

ExperimentPanel::ExperimentPanel(QWidget* parent) : QDockWidget(tr("Experiment"), parent), checkTimer_(new QTimer(this)), wheelGuard_(new WheelGuard(this)) {
  setObjectName(QStringLiteral("experimentPanel"));
  setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetFloatable);
  checkTimer_->setSingleShot(true);
  checkTimer_->setInterval(kCheckDelayMs);
  connect(checkTimer_, &QTimer::timeout, this, &ExperimentPanel::check);

  auto* editors = new QWidget;
  auto* column = new QVBoxLayout(editors);
  column->setContentsMargins(6, 6, 6, 6);
  column->setSpacing(8);
  name_ = new QLineEdit(editors);
  name_->setObjectName(QStringLiteral("name"));
  name_->setToolTip(tr("The experiment's name (saved in config.json, used for autosave folders)"));
  connect(name_, &QLineEdit::textEdited, this, &ExperimentPanel::scheduleCheck);
  description_ = captionLabel(editors);
  auto* nameRow = new QFormLayout;
  nameRow->addRow(tr("Name"), name_);
  column->addLayout(nameRow);
  column->addWidget(description_);
  for (QWidget* group : {buildModelGroup(), buildAttentionGroup(), buildPositionalGroup(), buildGatesGroup(),
                         buildTaskGroup(), buildTrainingGroup()})
    column->addWidget(group);
  column->addStretch(1);

  auto* scroll = new QScrollArea;
  scroll->setWidget(editors);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setFrameShape(QFrame::NoFrame);
  // Wide enough for the longest labels and a readable field beside them.
  scroll->setMinimumWidth(editors->sizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());

  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(scroll, 1);
  layout->addWidget(buildFooter());
  setWidget(body);

  ExperimentConfig defaults;
  setAppliedConfig(defaults);
}

// ---- building ---------------------------------------------------------------------------------

NumberField* ExperimentPanel::addField(QFormLayout* form, const QString& label, const QString& key, int kind,
                                       const QString& help) {
  auto* f = new NumberField(key, static_cast<NumberField::Kind>(kind), form->parentWidget());
  f->setHelp(QStringLiteral("%1  (%2)").arg(help, key));
  connect(f, &QLineEdit::textEdited, this, &ExperimentPanel::scheduleCheck);
  auto* l = new QLabel(label, form->parentWidget());
  l->setToolTip(f->toolTip());
  form->addRow(l, f);
  fields_.push_back(f);
  return f;
}

QCheckBox* ExperimentPanel::addCheck(QFormLayout* form, const QString& text, const QString& key, const QString& help) {
  auto* box = new QCheckBox(text, form->parentWidget());
  box->setObjectName(key);
  box->setToolTip(QStringLiteral("%1  (%2)").arg(help, key));
  connect(box, &QCheckBox::toggled, this, &ExperimentPanel::scheduleCheck);
  form->addRow(box);
  checks_.push_back(box);
  return box;
}

QComboBox* ExperimentPanel::makePicker(const QString& key) {
  auto* box = new QComboBox;
  box->setObjectName(key);
  box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  box->setMinimumContentsLength(10);
  wheelGuard_->guard(box);  // scrolling the panel past a picker leaves it alone
  // The closed picker shows its current member's formula too.
  connect(box, &QComboBox::currentIndexChanged, box, [box](int i) { box->setToolTip(box->itemData(i, Qt::ToolTipRole).toString()); });
  connect(box, &QComboBox::currentIndexChanged, this, &ExperimentPanel::scheduleCheck);
  pickers_.push_back(box);
  return box;
}

QWidget* ExperimentPanel::buildModelGroup() {
  auto* box = new QGroupBox(tr("Model"));
  QFormLayout* form = formOf(box);
  using K = NumberField::Kind;
  addField(form, tr("Width d_model"), QStringLiteral("model.d_model"), int(K::Integer), tr("Size of each token's vector"));
  NumberField* layers = addField(form, tr("Layers"), QStringLiteral("model.n_layers"), int(K::Integer), tr("Number of Transformer blocks"));
  connect(layers, &QLineEdit::textEdited, this, &ExperimentPanel::rebuildLayerPickers);
  addField(form, tr("Heads"), QStringLiteral("model.n_heads"), int(K::Integer), tr("Attention heads per layer; must divide d_model"));
  addField(form, tr("KV heads"), QStringLiteral("model.n_kv_heads"), int(K::Integer),
           tr("Key/value heads shared by groups of query heads (GQA; 1 = MQA); 0 = one per head; must divide the heads"));
  addField(form, tr("MLP width d_ff"), QStringLiteral("model.d_ff"), int(K::Integer), tr("Hidden size of each block's GELU MLP"));
  QCheckBox* attentionOnly =
      addCheck(form, tr("Attention only (no MLP)"), QStringLiteral("model.attention_only"), tr("Blocks without the MLP"));
  connect(attentionOnly, &QCheckBox::toggled, field(QStringLiteral("model.d_ff")), &QWidget::setDisabled);
  addField(form, tr("Context"), QStringLiteral("model.context"), int(K::Integer), tr("Longest sequence the model reads, in tokens"));
  addCheck(form, tr("Tied output head"), QStringLiteral("model.tied_embeddings"),
           tr("The output head reuses the token embedding instead of its own weights"));
  return box;
}

QWidget* ExperimentPanel::buildAttentionGroup() {
  auto* box = new QGroupBox(tr("Attention"));
  QFormLayout* form = formOf(box);
  perLayer_ = new QCheckBox(tr("A different variant in each layer"), box);
  perLayer_->setObjectName(QStringLiteral("model.attention.per_layer"));
  perLayer_->setToolTip(tr("Hybrid models: pick the attention variant of every layer on its own (model.attention lists one per layer)"));
  connect(perLayer_, &QCheckBox::toggled, this, [this] {
    if (loading_) return;
    rebuildLayerPickers();
    scheduleCheck();
  });
  form->addRow(perLayer_);
  layerBox_ = new QWidget(box);
  layerForm_ = new QFormLayout(layerBox_);
  layerForm_->setContentsMargins(0, 0, 0, 0);
  layerForm_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(layerBox_);
  attentionCaption_ = captionLabel(box);
  form->addRow(attentionCaption_);
  attentionSettings_ = new SettingsEditor(QStringLiteral("model.attention_settings"), box);
  connect(attentionSettings_, &SettingsEditor::edited, this, &ExperimentPanel::scheduleCheck);
  form->addRow(attentionSettings_);
  QComboBox* precision = makePicker(QStringLiteral("model.score_precision"));
  addChoices(precision, scorePrecisionCatalogue());
  form->addRow(tr("Score precision"), precision);
  return box;
}

QWidget* ExperimentPanel::buildPositionalGroup() {
  auto* box = new QGroupBox(tr("Positional encoding"));
  QFormLayout* form = formOf(box);
  positional_ = makePicker(QStringLiteral("model.positional"));
  addChoices(positional_, PositionalRegistry::instance().entries());
  connect(positional_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::refreshSettingsEditors);
  form->addRow(tr("Encoding"), positional_);
  positionalCaption_ = captionLabel(box);
  form->addRow(positionalCaption_);
  positionalSettings_ = new SettingsEditor(QStringLiteral("model.positional_settings"), box);
  connect(positionalSettings_, &SettingsEditor::edited, this, &ExperimentPanel::scheduleCheck);
  form->addRow(positionalSettings_);
  return box;
}

QWidget* ExperimentPanel::buildGatesGroup() {
  auto* box = new QGroupBox(tr("Gates and projections"));
  QFormLayout* form = formOf(box);
  QComboBox* output = makePicker(QStringLiteral("model.output_gate"));
  for (const QString& kind : namesOf(kOutputGateNames))
    addChoice(output, kind.toStdString(), kind == QLatin1String("none") ? "no output gate" : gateSummary("output_gate"));
  form->addRow(tr("Output gate"), output);
  addCheck(form, tr("Value gate"), QStringLiteral("model.value_gate"), q(gateSummary("value_gate")));
  addCheck(form, tr("Retention gate"), QStringLiteral("model.retention_gate"), q(gateSummary("retention_gate")));
  addField(form, tr("Retention sparsity"), QStringLiteral("model.retention_sparsity"), int(NumberField::Kind::Real),
           tr("lambda: the loss adds lambda times the retention gate's mean, so the model learns to keep few keys "
              "(needs the retention gate)"));
  QComboBox* sharing = makePicker(QStringLiteral("model.projection_sharing"));
  addChoices(sharing, projectionSharingCatalogue());
  form->addRow(tr("Projection sharing"), sharing);
  addField(form, tr("Latent width d_c"), QStringLiteral("model.kv_latent_dim"), int(NumberField::Kind::Integer),
           tr("Latent KV (sharing 'latent'): width of the latent c the cache holds per token and layer; 0 = d_model / 4"));
  addField(form, tr("KV share group"), QStringLiteral("model.kv_share_group"), int(NumberField::Kind::Integer),
           tr("Cross-layer KV: groups of this many layers attend over their first layer's keys and values, so the cache "
              "holds one K/V per group; 1 = off"));
  return box;
}

QWidget* ExperimentPanel::buildTaskGroup() {
  auto* box = new QGroupBox(tr("Task"));
  QFormLayout* form = formOf(box);
  task_ = makePicker(QStringLiteral("task.name"));
  addChoices(task_, TaskRegistry::instance().entries());
  connect(task_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::refreshSettingsEditors);
  form->addRow(tr("Task"), task_);
  auto* open = new QPushButton(tr("Open text file\u2026"), box);
  open->setObjectName(QStringLiteral("openTextFile"));
  open->setToolTip(tr("Train on a UTF-8 text file of your own, character by character (the \u201ctext\u201d task)"));
  connect(open, &QPushButton::clicked, this, &ExperimentPanel::chooseTextFile);
  form->addRow(open);
  taskCaption_ = captionLabel(box);
  form->addRow(taskCaption_);
  textRow_ = new QWidget(box);
  auto* textLayout = new QHBoxLayout(textRow_);
  textLayout->setContentsMargins(0, 0, 0, 0);
  textPath_ = new QLabel(textRow_);
  textPath_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  textLayout->addWidget(new QLabel(tr("File:"), textRow_));
  textLayout->addWidget(textPath_, 1);
  form->addRow(textRow_);
  taskSettings_ = new SettingsEditor(QStringLiteral("task.settings"), box);
  connect(taskSettings_, &SettingsEditor::edited, this, &ExperimentPanel::scheduleCheck);
  form->addRow(taskSettings_);
  NumberField* seqLen = addField(form, tr("Sequence length"), QStringLiteral("task.seq_len"), int(NumberField::Kind::Integer),
                                 tr("Length of the training sequences; empty or 0 = what the task makes for the context"));
  seqLen->setDefault(0);
  return box;
}

QWidget* ExperimentPanel::buildTrainingGroup() {
  auto* box = new QGroupBox(tr("Training"));
  QFormLayout* form = formOf(box);
  using K = NumberField::Kind;
  addField(form, tr("Steps"), QStringLiteral("train.steps"), int(K::Integer), tr("Optimiser steps to train"));
  addField(form, tr("Batch"), QStringLiteral("train.batch"), int(K::Integer), tr("Sequences per step"));
  addField(form, tr("Learning rate"), QStringLiteral("train.lr"), int(K::Real), tr("Peak AdamW learning rate (after warmup, then cosine decay)"));
  addField(form, tr("Warmup steps"), QStringLiteral("train.warmup"), int(K::Integer), tr("Steps of linear learning-rate warmup"));
  addField(form, tr("Seed"), QStringLiteral("train.seed"), int(K::Unsigned), tr("Seeds the weights and the data: the same seed and threads give the same run"));
  addField(form, tr("Threads"), QStringLiteral("train.threads"), int(K::Integer), tr("CPU threads the engine uses"));
  addField(form, tr("Validate every"), QStringLiteral("train.eval_every"), int(K::Integer),
           tr("Steps between validation passes (0: only at the end)"));
  return box;
}

QWidget* ExperimentPanel::buildFooter() {
  auto* footer = new QFrame;
  footer->setFrameShape(QFrame::StyledPanel);
  auto* layout = new QVBoxLayout(footer);
  layout->setContentsMargins(8, 6, 8, 6);
  memory_ = new QLabel(footer);
  memory_->setObjectName(QStringLiteral("memoryEstimate"));
  memory_->setWordWrap(true);
  memory_->setTextFormat(Qt::RichText);
  time_ = new QLabel(footer);
  time_->setObjectName(QStringLiteral("timeEstimate"));
  time_->setWordWrap(true);
  time_->setTextFormat(Qt::RichText);
  time_->setToolTip(tr("Training FLOPs per step (6 per parameter per token plus attention) over this machine's speed, "
                       "measured once in the background on a small model. Real steps vary with the model's shape and "
                       "the machine's load: the progress bar times the real ones."));
  connect(TrainingRate::shared(), &TrainingRate::changed, this, &ExperimentPanel::check);
  problem_ = new QLabel(footer);
  problem_->setObjectName(QStringLiteral("problem"));
  problem_->setWordWrap(true);
  problem_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problem_->setStyleSheet(QStringLiteral("QLabel { color: #b71c1c; font-weight: bold; }"));
  problem_->hide();
  applyButton_ = new QPushButton(tr("Apply"), footer);
  applyButton_->setObjectName(QStringLiteral("apply"));
  applyButton_->setToolTip(tr("Build a new experiment from these settings (the current model is discarded)"));
  connect(applyButton_, &QPushButton::clicked, this, &ExperimentPanel::apply);
  revertButton_ = new QPushButton(tr("Revert"), footer);
  revertButton_->setToolTip(tr("Put the settings of the current experiment back"));
  connect(revertButton_, &QPushButton::clicked, this, &ExperimentPanel::revert);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(revertButton_);
  buttons->addWidget(applyButton_);
  layout->addWidget(memory_);
  layout->addWidget(time_);
  layout->addWidget(problem_);
  layout->addLayout(buttons);
  return footer;
}

// ---- showing a config -------------------------------------------------------------------------

// A picker of one config value (the gates, the encoding, the task), not one of the attention
// variant pickers, which together make the list model.attention.
bool ExperimentPanel::isSingleValuePicker(const QComboBox* box) {
  return !box->objectName().startsWith(QLatin1String("model.attention"));
}

void ExperimentPanel::setAppliedConfig(const ExperimentConfig& config) {
  applied_ = config;
  showEditors(config);
}

void ExperimentPanel::revert() { showEditors(applied_); }

void ExperimentPanel::showEditors(const ExperimentConfig& c) {
  loading_ = true;
  name_->setText(q(c.name));
  description_->setText(q(c.description));
  description_->setVisible(!c.description.empty());
  // Every editor is named by its config key: the engine's field table gives its value.
  auto text = [&c](const QString& key) {
    std::string value;
    configFieldText(c, key.toStdString(), value);
    return value;
  };
  for (NumberField* f : fields_) f->setText(q(text(f->key())));
  for (QCheckBox* box : checks_) box->setChecked(text(box->objectName()) == "true");
  for (QComboBox* box : pickers_)
    if (isSingleValuePicker(box)) choose(box, text(box->objectName()));
  const ModelConfig& m = c.model;
  textFile_ = q(c.task.text_path);

  layerChoice_.clear();
  for (const std::string& name : m.attention) layerChoice_ << q(name);
  perLayer_->setChecked(m.attention.size() > 1);
  buildLayerPickers();
  refreshSettingsEditors();
  attentionSettings_->setValues(m.attention_settings);
  positionalSettings_->setValues(m.positional_settings);
  taskSettings_->setValues(c.task.settings);
  for (NumberField* f : fields_) f->setProblem({});
  loading_ = false;
  check();
}

int ExperimentPanel::layerPickerCount() const {
  if (!perLayer_->isChecked()) return 1;
  // A per-layer list needs a sensible layer count; until then one picker stands for all layers.
  std::optional<double> layers;
  field(QStringLiteral("model.n_layers"))->read(layers);
  return layers && *layers >= 1 && *layers <= 64 ? int(*layers) : 1;
}

void ExperimentPanel::rebuildLayerPickers() {
  if (layerPickerCount() == int(layerPickers_.size()) && perLayer_->isChecked() == pickersPerLayer_) return;
  layerChoice_.clear();
  for (QComboBox* box : layerPickers_) layerChoice_ << choiceOf(box);
  if (!pickersPerLayer_) layerChoice_ = layerChoice_.mid(0, 1);  // every layer starts from the shared choice
  buildLayerPickers();
  if (!loading_) refreshSettingsEditors();
}

void ExperimentPanel::buildLayerPickers() {
  for (QComboBox* box : layerPickers_) pickers_.erase(std::find(pickers_.begin(), pickers_.end(), box));
  while (layerForm_->rowCount() > 0) layerForm_->removeRow(0);
  layerPickers_.clear();
  pickersPerLayer_ = perLayer_->isChecked();
  const int count = layerPickerCount();
  for (int l = 0; l < count; ++l) {
    QComboBox* box = makePicker(pickersPerLayer_ ? QStringLiteral("model.attention.%1").arg(l) : QStringLiteral("model.attention"));
    addChoices(box, AttentionRegistry::instance().entries());
    choose(box, layerChoice_.value(l, layerChoice_.value(0, QStringLiteral("softmax"))).toStdString());
    connect(box, &QComboBox::currentIndexChanged, this, &ExperimentPanel::refreshSettingsEditors);
    layerForm_->addRow(pickersPerLayer_ ? tr("Layer %1").arg(l + 1) : tr("Variant"), box);
    layerPickers_.push_back(box);
  }
}

void ExperimentPanel::refreshSettingsEditors() {
  QStringList variants;
  for (QComboBox* box : layerPickers_)
    if (!variants.contains(choiceOf(box))) variants << choiceOf(box);
  attentionSettings_->setSpecs(attentionSpecsOf(variants));
  QStringList captions;
  for (const QString& v : variants)
    if (const auto* e = AttentionRegistry::instance().find(v.toStdString())) captions << v + QStringLiteral(": ") + q(e->summary);
  attentionCaption_->setText(captions.join(QLatin1Char('\n')));

  const std::string positional = choiceOf(positional_).toStdString();
  if (auto encoding = PositionalRegistry::instance().create(positional)) positionalSettings_->setSpecs(encoding->settingSpecs());
  if (const auto* e = PositionalRegistry::instance().find(positional)) positionalCaption_->setText(q(e->summary));

  const std::string task = choiceOf(task_).toStdString();
  if (auto t = TaskRegistry::instance().create(task)) taskSettings_->setSpecs(t->settingSpecs());
  if (const auto* e = TaskRegistry::instance().find(task)) taskCaption_->setText(q(e->summary));
  const bool text = task == "text";
  textRow_->setVisible(text);
  textPath_->setText(textFile_.isEmpty() ? tr("(none: use Open text file\u2026)") : QFileInfo(textFile_).fileName());
  textPath_->setToolTip(textFile_);
  scheduleCheck();
}

void ExperimentPanel::setTextFile(const QString& path) {
  textFile_ = path;
  choose(task_, "text");
  refreshSettingsEditors();
  check();
}

void ExperimentPanel::chooseTextFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Text File"), QFileInfo(textFile_).path(),
                                                    tr("Text files (*.txt *.md *.csv *.tsv);;All files (*)"));
  if (!path.isEmpty()) setTextFile(path);
}

// ---- reading and checking ---------------------------------------------------------------------

QString ExperimentPanel::readEditors(ExperimentConfig& c) const {
  c = applied_;  // keeps what the panel does not show (description, AdamW betas, ...)
  c.model.vocab = 0;  // from the task, which the editors may have changed
  c.name = name_->text().trimmed().toStdString();
  QString first;
  // Each editor writes its value through --set's parser, keyed by its config key: a value the
  // field table refuses marks the editor with the reason.
  auto assign = [&](const QString& key, const QString& value) { return q(applyOverride(c, (key + QLatin1Char('=') + value).toStdString())); };
  for (NumberField* f : fields_) {
    QString why;
    if (f->key() == QLatin1String("train.seed")) {
      quint64 seed = 0;
      why = f->readUnsigned(seed);
      if (why.isEmpty()) why = assign(f->key(), QString::number(seed));
    } else {
      std::optional<double> value;
      why = f->read(value);
      // empty: 0, which the engine reads as the default (d_model / 4, the context, ...)
      if (why.isEmpty()) why = assign(f->key(), value ? QString::number(*value, 'g', 17) : QStringLiteral("0"));
    }
    f->setProblem(why);
    if (first.isEmpty()) first = why;
  }
  for (QCheckBox* box : checks_) assign(box->objectName(), box->isChecked() ? QStringLiteral("true") : QStringLiteral("false"));
  for (QComboBox* box : pickers_)
    if (isSingleValuePicker(box))
      if (const QString why = assign(box->objectName(), choiceOf(box)); first.isEmpty()) first = why;
  ModelConfig& m = c.model;
  c.task.text_path = c.task.name == "text" ? textFile_.toStdString() : std::string();

  m.attention.clear();
  std::string owners;
  for (QComboBox* box : layerPickers_) {
    m.attention.push_back(choiceOf(box).toStdString());
    owners += (owners.empty() ? "" : "/") + m.attention.back();
  }
  // Only the settings the chosen members declare are kept: a key left from another member means nothing.
  m.attention_settings.clear();
  m.positional_settings.clear();
  c.task.settings.clear();
  for (QString why : {attentionSettings_->read(m.attention_settings, owners),
                      positionalSettings_->read(m.positional_settings, m.positional),
                      taskSettings_->read(c.task.settings, c.task.name)})
    if (first.isEmpty()) first = why;
  return first;
}

QString ExperimentPanel::readConfig(ExperimentConfig& out) {
  checkTimer_->stop();
  ExperimentConfig c;
  QString why = readEditors(c);
  MemoryEstimate estimate;
  // validate(), then the model's own sizes; whether they fit is asked below, so the figures show either way
  if (why.isEmpty()) why = q(estimateMemory(c, estimate, ThisMachine::mayNotFit));
  markFields(why);

  if (why.isEmpty()) {
    const QLocale english(QLocale::English);  // "1,234,567": grouped, whatever the system locale
    memory_->setText(tr("<b>Memory for training: %1</b><br>%2 parameters (weights and gradients %3)"
                        "<br>AdamW state %4<br>activations %5 at batch %6 \u00d7 %7 tokens")
                         .arg(bytesText(double(estimate.totalBytes())))
                         .arg(english.toString(qulonglong(estimate.parameters)))
                         .arg(bytesText(double(estimate.parameterBytes)), bytesText(double(estimate.optimizerBytes)),
                              bytesText(double(estimate.activationBytes)))
                         .arg(c.train.batch)
                         .arg(estimate.sequenceLength));
    why = q(trainingMemoryRefusal(estimate, availableMemoryBytes()));  // the refusal Trainer would give
  } else {
    memory_->setText(tr("<b>Memory for training:</b> (fix the settings first)"));
  }
  showTimeEstimate(why.isEmpty() ? trainingFlopsPerStep(c, estimate) : 0, c.train.steps);
  problemText_ = why;
  problem_->setText(why.isEmpty() ? QString() : QStringLiteral("\u26a0 ") + why);
  problem_->setVisible(!why.isEmpty());
  const bool changed = why.isEmpty() && differsFromApplied(c);
  applyButton_->setEnabled(changed);
  revertButton_->setEnabled(why.isEmpty() ? changed : true);
  if (why.isEmpty()) out = std::move(c);
  return why;
}

void ExperimentPanel::markFields(const QString& reason) {
  if (reason.isEmpty()) return;
  for (NumberField* f : fields_)
    if (reason.contains(f->key()) && f->toolTip() != reason) f->setProblem(reason);
}

void ExperimentPanel::scheduleCheck() {
  if (!loading_) checkTimer_->start();
}

void ExperimentPanel::check() {
  ExperimentConfig ignored;
  readConfig(ignored);
}

bool ExperimentPanel::hasChanges() {
  ExperimentConfig c;
  if (!readConfig(c).isEmpty()) return true;
  return differsFromApplied(c);
}

bool ExperimentPanel::differsFromApplied(const ExperimentConfig& edited) const {
  ExperimentConfig applied = applied_;
  applied.model.vocab = 0;  // as readEditors leaves it
  return configToJson(edited) != configToJson(applied);
}

bool ExperimentPanel::apply() {
  ExperimentConfig c;
  if (!readConfig(c).isEmpty()) {
    problem_->show();
    return false;
  }
  emit applyRequested(markedAsEdited(std::move(c), applied_));
  return true;
}

QString ExperimentPanel::problem() const { return problemText_; }

QString ExperimentPanel::memoryText() const { return memory_->text(); }

QString ExperimentPanel::timeText() const { return time_->text(); }

void ExperimentPanel::showTimeEstimate(double flopsPerStep, int steps) {
  const TrainingRate* rate = TrainingRate::shared();
  secondsPerStep_ = flopsPerStep > 0 && rate->known() ? flopsPerStep / rate->flopsPerSecond() : 0;
  if (flopsPerStep <= 0) return time_->setText(tr("<b>Time per step:</b> (fix the settings first)"));
  if (!rate->known()) return time_->setText(tr("<b>Time per step:</b> unknown yet (measuring this machine\u2019s speed\u2026)"));
  const double seconds = secondsPerStep_;
  time_->setText(tr("<b>Time per step: about %1</b> (estimate)<br>%2 steps: about %3")
                     .arg(durationText(seconds), QString::number(steps), durationText(seconds * steps)));
}

NumberField* ExperimentPanel::field(const QString& key) const {
  for (NumberField* f : fields_)
    if (f->key() == key) return f;
  for (SettingsEditor* editor : {attentionSettings_, positionalSettings_, taskSettings_})
    if (NumberField* f = editor ? editor->field(key) : nullptr) return f;
  return nullptr;
}

QComboBox* ExperimentPanel::picker(const QString& key) const {
  for (QComboBox* box : pickers_)
    if (box->objectName() == key) return box;
  return nullptr;
}

QCheckBox* ExperimentPanel::checkBox(const QString& key) const {
  if (key == perLayer_->objectName()) return perLayer_;
  for (QCheckBox* box : checks_)
    if (box->objectName() == key) return box;
  return nullptr;
}

}  // namespace attnlab
