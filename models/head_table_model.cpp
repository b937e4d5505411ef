#include "head_table_model.h"

#include <QBrush>
#include <QColor>
#include <QElapsedTimer>
#include <QPalette>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attention_map_model.h"
#include "background_job.h"
#include "data/task.h"
#include "training_session.h"

namespace attnlab {

struct HeadTableModel::ProbeCache {
  std::shared_ptr<const RunData> run;  // the run `probe` was drawn for
  std::vector<int> text;               // an opened model's probe it was made on
  std::unique_ptr<MapDiagnosticsProbe> probe;
};

namespace {

struct ColumnInfo {
  const char* title;
  const char* tip;
};

// Titles and the formula behind each column (header tooltips).
const ColumnInfo kColumns[HeadTableModel::ColumnCount] = {
    {"Layer", "Layer (1 = nearest the input)"},
    {"Head", "Head within the layer"},
    {"Variant", "The layer's attention variant"},
    {"Entropy", "Mean row entropy H_i = -\u03a3_j a_ij ln a_ij (nats), on the task's probe batch. Low: focused; high: spread out."},
    {"H / ln n", "Entropy divided by ln(visible keys of the row): 0 = one key, 1 = uniform over the visible keys."},
    {"Distance", "Mean attended distance \u03a3_j a_ij |i - j| (positions)."},
    {"Sink", "Mass on the first token a_i0 (an attention sink when close to 1)."},
    {"Prev-token", "Mass on the previous token a_i,i-1, on repeated random sequences [t0, r, r]."},
    {"Induction", "On [t0, r, r]: mass a_i,i-n+1 on the token after the earlier copy of the current one (1 = a perfect induction head)."},
    {"Eff. rank", "Effective rank exp(H(\u03c3/\u03a3\u03c3)) of the map's singular values: 1 = every query reads the same keys, T = all different."},
    {"Ablation",
     "Validation loss increase: loss with this head switched off minus with it on (the other heads as shown). For a head that is off: the loss it would recover when switched on."},
    {"Gradient", "Gradient importance: |dL/dg_h| for the head's output gain g_h at the gains shown, |.| per batch, averaged (Michel et al. 2019)."},
    {"On", "Untick to switch the head off (ablate it) in every view; training is not affected."},
};

double field(const MapDiagnostics& d, int column) {
  switch (column) {
    case HeadTableModel::Entropy: return d.entropy;
    case HeadTableModel::NormalisedEntropy: return d.normalised_entropy;
    case HeadTableModel::MeanDistance: return d.mean_distance;
    case HeadTableModel::Sink: return d.sink;
    case HeadTableModel::PreviousToken: return d.previous_token;
    case HeadTableModel::Induction: return d.induction;
    case HeadTableModel::EffectiveRank: return d.effective_rank;
  }
  return kNotMeasured;
}

// An opened model's sample: the probe as one sequence, each token predicting the next.
std::vector<Batch> probeSample(const std::vector<int>& probe) {
  if (probe.size() < 2) return {};
  Batch b{1, static_cast<int>(probe.size()), probe, {}};
  b.targets.assign(probe.begin() + 1, probe.end());
  b.targets.push_back(-1);
  return {b};
}

bool anyOffIn(const HeadGains& gains) {
  for (const auto& layer : gains)
    for (float g : layer)
      if (g == 0) return true;
  return false;
}

QString formatted(double v, int column) {
  switch (column) {
    case HeadTableModel::MeanDistance:
    case HeadTableModel::EffectiveRank: return QString::number(v, 'f', 1);
    // Importance spans decades (an untrained head moves the loss by 1e-4, an induction head by 3): significant digits.
    case HeadTableModel::Ablation: return (v >= 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'g', 3);
    case HeadTableModel::Gradient: return QString::number(v, 'g', 3);
  }
  return QString::number(v, 'f', 2);
}

}  // namespace

HeadTableModel::HeadTableModel(AttentionMapModel* attention, TrainingSession* session, QObject* parent)
    : QAbstractTableModel(parent),
      attention_(attention),
      session_(session),
      diagnosticsJob_(new BackgroundJob(this)),
      importanceJob_(new BackgroundJob(this)),
      probeCache_(std::make_shared<ProbeCache>()) {
  connect(attention_, &AttentionMapModel::shapeChanged, this, &HeadTableModel::resetShape);
  connect(attention_, &AttentionMapModel::mapChanged, this, &HeadTableModel::snapshotArrived);
  for (BackgroundJob* job : {diagnosticsJob_, importanceJob_}) {
    connect(job, &BackgroundJob::failed, this, &HeadTableModel::failed);
    // The newest snapshot waits while a computation runs, and the pace below spaces them out.
    connect(job, &BackgroundJob::busyChanged, this, [this](bool jobBusy) {
      emit busyChanged(busy());
      if (!jobBusy) schedule();
    });
  }
  clock_.start();
  for (Pace* pace : {&diagnosticsPace_, &importancePace_}) {
    pace->retry = new QTimer(this);
    pace->retry->setSingleShot(true);
    connect(pace->retry, &QTimer::timeout, this, &HeadTableModel::schedule);
  }
  if (session_) {
    connect(session_, &TrainingSession::cleared, this, &HeadTableModel::refreshRows);
    // Resting is for sharing the CPU with training: once it pauses or ends, catch up at once.
    connect(session_, &TrainingSession::stateChanged, this, [this](TrainingSession::State state) {
      if (state != TrainingSession::State::Running) catchUp();
    });
  }
  resetShape();
  snapshotArrived();
}

HeadTableModel::~HeadTableModel() = default;

int HeadTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : layers_ * heads_; }

int HeadTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

bool HeadTableModel::hasAnswers() const { return latest_ && latest_->run && latest_->run->hasAnswers; }

bool HeadTableModel::isOn(int layer, int head) const {
  if (!session_) return true;
  const HeadGains& gains = session_->headGains();
  if (layer < 0 || layer >= int(gains.size()) || head < 0 || head >= int(gains[layer].size())) return true;
  return gains[layer][head] != 0;
}

bool HeadTableModel::anyOff() const {
  for (int l = 0; l < layers_; ++l)
    for (int h = 0; h < heads_; ++h)
      if (!isOn(l, h)) return true;
  return false;
}

void HeadTableModel::setHeadOn(int layer, int head, bool on) {
  if (!session_ || layer < 0 || layer >= layers_ || head < 0 || head >= heads_ || isOn(layer, head) == on) return;
  HeadGains gains(layers_, std::vector<float>(heads_, 1.0f));
  for (int l = 0; l < layers_; ++l)
    for (int h = 0; h < heads_; ++h) gains[l][h] = isOn(l, h) ? 1.0f : 0.0f;
  gains[layer][head] = on ? 1.0f : 0.0f;
  session_->setHeadGains(anyOffIn(gains) ? gains : HeadGains{});
  refreshRows();
}

void HeadTableModel::switchAllOn() {
  if (!session_ || !anyOff()) return;
  session_->setHeadGains({});
  refreshRows();
}

void HeadTableModel::refreshRows() {
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void HeadTableModel::resetShape() {
  const int layers = attention_->layerCount();
  const int heads = layers > 0 ? attention_->headCount(0) : 0;
  beginResetModel();
  layers_ = layers;
  heads_ = heads;
  variants_.clear();
  for (int l = 0; l < layers_; ++l) variants_.push_back(QString::fromStdString(attention_->snapshot()->trace.layers[l].variant));
  diagnostics_.clear();
  diagnosticsStep_ = -1;
  importance_.reset();
  importanceStep_ = importanceRequestedStep_ = -1;
  importanceGains_.clear();
  importanceRun_.reset();
  importanceProbe_.clear();
  latest_.reset();
  latestProbe_.clear();
  diagnosticsPending_ = false;
  diagnosticsJob_->cancel();
  importanceJob_->cancel();
  endResetModel();
  emit curvesChanged();
}

void HeadTableModel::snapshotArrived() {
  const TraceSnapshot* trace = attention_->snapshot();
  if (!trace || !trace->model || trace->model == latest_) return;
  latest_ = trace->model;
  latestProbe_ = trace->trace.tokens;
  diagnosticsPending_ = true;
  schedule();
}

void HeadTableModel::setActive(bool active) {
  active_ = active;
  schedule();
}

void HeadTableModel::schedule() {
  if (!active_ || !latest_) return;
  if (diagnosticsPending_ && !diagnosticsJob_->busy() && paced(diagnosticsPace_)) submitDiagnostics();
  if (importanceWanted() && !importanceJob_->busy() && paced(importancePace_)) submitImportance();
}

bool HeadTableModel::paced(Pace& pace) {
  const qint64 wait = pace.readyAt - clock_.elapsed();
  if (wait <= 0) return true;
  if (!pace.retry->isActive()) pace.retry->start(int(wait));
  return false;
}

void HeadTableModel::ran(Pace& pace, qint64 tookMs) {
  const bool training = session_ && session_->state() == TrainingSession::State::Running;
  pace.readyAt = clock_.elapsed() + (training ? kRestWhileTraining * tookMs : 0);
}

bool HeadTableModel::busy() const { return diagnosticsJob_->busy() || importanceJob_->busy(); }

void HeadTableModel::catchUp() {
  for (Pace* pace : {&diagnosticsPace_, &importancePace_}) {
    pace->readyAt = 0;
    pace->retry->stop();
  }
  schedule();
}

void HeadTableModel::waitForIdle() {
  catchUp();
  while (busy()) {
    diagnosticsJob_->waitForIdle();
    importanceJob_->waitForIdle();  // its delivery may have started the other job again
  }
}

bool HeadTableModel::importanceWanted() const {
  if (!active_ || !latest_ || !latest_->run) return false;
  if (onOpenedModel())
    return latestProbe_.size() >= 2 && (latestProbe_ != importanceProbe_ || latest_->headGains != importanceGains_ || latest_->run != importanceRun_);
  return !latest_->run->evalBatches.empty() &&
         (latest_->step != importanceRequestedStep_ || latest_->headGains != importanceGains_ || latest_->run != importanceRun_);
}

void HeadTableModel::submitDiagnostics() {
  diagnosticsPending_ = false;
  std::shared_ptr<const ModelSnapshot> snapshot = latest_;
  if (!snapshot || !snapshot->model || !snapshot->run) return;
  std::shared_ptr<ProbeCache> cache = probeCache_;
  const std::vector<int> text = onOpenedModel() ? latestProbe_ : std::vector<int>{};
  diagnosticsJob_->submit([this, snapshot, cache, text]() -> BackgroundJob::Delivery {
    QElapsedTimer took;
    took.start();
    const RunData& run = *snapshot->run;
    if (cache->run != snapshot->run || cache->text != text) {
      if (!run.openedName.empty()) {  // no task: the user's text, and random repeats for previous-token and induction
        if (text.empty()) throw std::invalid_argument("head diagnostics need a probe");
        const int repeat = std::min(kOpenedRepeatLength, (run.config.model.context - 1) / 2);
        const Batch probe{1, static_cast<int>(text.size()), text, std::vector<int>(text.size(), -1)};
        cache->probe = std::make_unique<MapDiagnosticsProbe>(probe, run.config.model.vocab, repeat, kProbeBatch, kProbeSeed);
      } else {
        std::string error;
        const std::unique_ptr<Task> task = makeTask(run.config.task, error);
        if (!task) throw std::invalid_argument("head diagnostics: " + error);
        cache->probe = std::make_unique<MapDiagnosticsProbe>(*task, run.config.model.vocab, run.sequenceLength, kProbeBatch, kProbeSeed);
      }
      cache->run = snapshot->run;
      cache->text = text;
    }
    auto result = cache->probe->measure(*snapshot->model);
    return [this, result = std::move(result), step = snapshot->step, ms = took.elapsed()] {
      ran(diagnosticsPace_, ms);
      if (int(result.size()) != layers_ || (layers_ > 0 && int(result[0].size()) != heads_)) return;
      diagnostics_ = result;
      diagnosticsStep_ = step;
      if (rowCount() > 0) emit dataChanged(index(0, Entropy), index(rowCount() - 1, EffectiveRank));
    };
  });
}

void HeadTableModel::submitImportance() {
  std::shared_ptr<const ModelSnapshot> snapshot = latest_;
  importanceRequestedStep_ = snapshot->step;
  importanceGains_ = snapshot->headGains;
  importanceRun_ = snapshot->run;
  importanceProbe_ = latestProbe_;
  const std::vector<Batch> sample = onOpenedModel() ? probeSample(latestProbe_) : std::vector<Batch>{};
  importanceJob_->submit([this, snapshot, sample]() -> BackgroundJob::Delivery {
    QElapsedTimer took;
    took.start();
    // A private copy: importance switches heads on and off, which the shared snapshot must never see.
    const std::unique_ptr<Model> copy = copyModel(*snapshot->model);
    auto result = std::make_shared<const LiveHeadImportance>(
        liveHeadImportance(*copy, sample.empty() ? snapshot->run->evalBatches : sample, snapshot->run->hasAnswers, snapshot->headGains,
                           kDropOrderSeed, &BackgroundJob::stopRequested));
    return [this, result, step = snapshot->step, ms = took.elapsed()] {
      ran(importancePace_, ms);
      if (int(result->heads.size()) != layers_ * heads_) return;
      importance_ = result;
      importanceStep_ = step;
      if (rowCount() > 0) emit dataChanged(index(0, Ablation), index(rowCount() - 1, Gradient));
      emit curvesChanged();
    };
  });
}

QVariant HeadTableModel::number(int row, int column) const {
  const int l = layerOf(row), h = headOf(row);
  switch (column) {
    case Layer: return l + 1;
    case Head: return h + 1;
    case Ablation:
    case Gradient: {
      if (!importance_) return {};
      const HeadImportance& hi = importance_->heads[row];
      return column == Ablation ? hi.ablation : hi.gradient;
    }
    case On: return isOn(l, h) ? 1 : 0;
  }
  if (column >= Entropy && column <= EffectiveRank && l < int(diagnostics_.size())) {
    const double v = field(diagnostics_[l][h], column);
    return std::isfinite(v) ? QVariant(v) : QVariant();
  }
  return {};
}

constexpr double kShadeFloor = 0.05;  // nats of loss increase that count as fully important at least

// A shade that grows with the value, so strong heads stand out while scanning: the pattern scores
// (0..1) in blue, the ablation importance (relative to the table's largest) in orange.
QVariant HeadTableModel::tint(int row, int column) const {
  const QVariant v = number(row, column);
  if (!v.isValid()) return {};
  double share = 0;
  QColor colour(66, 133, 244);
  if (column == Sink || column == PreviousToken || column == Induction) {
    share = v.toDouble();
  } else if (column == Ablation) {
    double top = kShadeFloor;  // so that noise in an untrained model is not shaded as importance
    for (const HeadImportance& hi : importance_->heads) top = std::max(top, hi.ablation);
    share = v.toDouble() / top;
    colour = QColor(240, 130, 30);
  } else {
    return {};
  }
  colour.setAlpha(static_cast<int>(std::clamp(share, 0.0, 1.0) * 140));
  return QBrush(colour);
}

QVariant HeadTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const int row = index.row(), column = index.column();
  const bool on = isOn(layerOf(row), headOf(row));
  switch (role) {
    case SortRole:
      return column == Variant ? QVariant(variants_[layerOf(row)]) : number(row, column);
    case Qt::DisplayRole: {
      if (column == On) return on ? tr("on") : tr("off");
      if (column == Variant) return variants_[layerOf(row)];
      const QVariant v = number(row, column);
      if (!v.isValid()) return QStringLiteral("\u2026");  // being computed
      if (column == Layer || column == Head) return v;
      return formatted(v.toDouble(), column);
    }
    case Qt::CheckStateRole:
      return column == On ? QVariant(on ? Qt::Checked : Qt::Unchecked) : QVariant();
    case Qt::TextAlignmentRole:
      return column == Variant || column == On ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      return on ? QVariant() : QVariant(QBrush(QColor(150, 150, 150)));
    case Qt::BackgroundRole:
      return on ? tint(row, column) : QVariant();
    case Qt::ToolTipRole:
      return on ? QVariant(tr("Layer %1, head %2").arg(layerOf(row) + 1).arg(headOf(row) + 1))
                : QVariant(tr("Layer %1, head %2 is switched off in every view").arg(layerOf(row) + 1).arg(headOf(row) + 1));
  }
  return {};
}

QVariant HeadTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  if (role == Qt::DisplayRole) return tr(kColumns[section].title);
  if (role == Qt::ToolTipRole) return tr(kColumns[section].tip);
  return {};
}

Qt::ItemFlags HeadTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == On && session_) f |= Qt::ItemIsUserCheckable;
  return f;
}

bool HeadTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.column() != On || role != Qt::CheckStateRole || !session_) return false;
  setHeadOn(layerOf(index.row()), headOf(index.row()), value.toInt() == Qt::Checked);
  return true;
}

}  // namespace attnlab
