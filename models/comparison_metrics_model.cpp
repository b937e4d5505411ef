#include "comparison_metrics_model.h"

#include <algorithm>
#include <cmath>

#include "background_job.h"
#include "kv/eviction_policy.h"
#include "kv/live_cache_eval.h"
#include "kv/kv_bytes.h"

namespace attnlab {

namespace {

// The first `count` sequences of `batch`.
Batch firstSequences(const Batch& batch, int count) {
  Batch out;
  out.B = std::min(count, batch.B);
  out.T = batch.T;
  const size_t n = static_cast<size_t>(out.B) * out.T;
  out.inputs.assign(batch.inputs.begin(), batch.inputs.begin() + n);
  out.targets.assign(batch.targets.begin(), batch.targets.begin() + n);
  return out;
}

// "unlimited", a count "16" or a share "25%" of the positions seen, per KV head.
std::string budgetFrom(const QString& text, Budget& out) {
  if (text == QLatin1String("unlimited")) {
    out = Budget{};
    return {};
  }
  return parseBudget(text.toStdString(), "head", out);
}

QString formatted(double v, int decimals) { return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("\u2013"); }

}  // namespace

ComparisonMetricsModel::ComparisonMetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

ComparisonMetricsModel::~ComparisonMetricsModel() = default;  // the jobs are children: they wait for their work

void ComparisonMetricsModel::setRuns(const QStringList& names, const std::vector<ExperimentConfig>& configs) {
  beginResetModel();
  for (Run& run : runs_) delete run.job;
  runs_.clear();
  for (int i = 0; i < names.size(); ++i) {
    Run run;
    run.name = names[i];
    const bool known = i < static_cast<int>(configs.size());
    run.experiment = known ? QString::fromStdString(configs[i].name) : QString();
    run.gated = known && configs[i].model.retention_gate;
    run.kvBytes = known ? static_cast<double>(kvCacheBytesPerToken(configs[i].model)) : kNotMeasured;
    run.job = new BackgroundJob(this);
    connect(run.job, &BackgroundJob::busyChanged, this, [this] { emit busyChanged(busy()); });
    const int index = i;
    connect(run.job, &BackgroundJob::failed, this, [this, index](const QString& message) {
      runs_[index].evaluating = false;
      runs_[index].cache = {};
      runs_[index].problem = message;
      columnChanged(index);
    });
    runs_.push_back(std::move(run));
  }
  endResetModel();
}

QString ComparisonMetricsModel::setEviction(const QString& policy, const QString& budget) {
  if (!EvictionPolicyRegistry::instance().find(policy.toStdString()))
    return tr("unknown eviction policy '%1'").arg(policy);
  Budget parsed;
  if (const std::string why = budgetFrom(budget, parsed); !why.empty()) return QString::fromStdString(why);
  policy_ = policy;
  budget_ = budget;
  reevaluate();
  return {};
}

void ComparisonMetricsModel::setProgress(int run, const ProgressSnapshot& progress) {
  if (run < 0 || run >= runCount()) return;
  runs_[run].progress = progress;
  runs_[run].hasProgress = true;
  columnChanged(run);
}

void ComparisonMetricsModel::renameRun(int run, const QString& name, const ExperimentConfig& config) {
  if (run < 0 || run >= runCount()) return;
  Run& r = runs_[run];
  r.name = name;
  r.experiment = QString::fromStdString(config.name);
  r.gated = config.model.retention_gate;
  r.kvBytes = static_cast<double>(kvCacheBytesPerToken(config.model));
  emit headerDataChanged(Qt::Horizontal, run, run);
  columnChanged(run);
}

void ComparisonMetricsModel::clearRun(int run) {
  if (run < 0 || run >= runCount()) return;
  Run& r = runs_[run];
  r.job->cancel();
  r.progress = {};
  r.hasProgress = false;
  r.cache = {};
  r.problem.clear();
  r.evaluating = false;
  r.model.reset();
  columnChanged(run);
}

void ComparisonMetricsModel::evaluate(int run, std::shared_ptr<const ModelSnapshot> model) {
  if (run < 0 || run >= runCount() || !model) return;
  Run& r = runs_[run];
  r.model = model;
  r.evaluating = true;
  columnChanged(run);
  LiveCacheSetup evicted;
  evicted.policy = policy_.toStdString();
  budgetFrom(budget_, evicted.budget);  // checked by setEviction
  r.job->submit([this, run, model, evicted]() -> BackgroundJob::Delivery {
    if (!model->run || model->run->evalBatches.empty()) throw std::invalid_argument("the run has no validation sample");
    const Batch sample = firstSequences(model->run->evalBatches.front(), kEvalSequences);
    CacheFigures figures;
    figures.step = model->step;
    figures.densePpl = evaluateLiveCache(*model->model, sample, {}).perplexity;
    const LiveCacheResult result = evaluateLiveCache(*model->model, sample, evicted);
    figures.evictionPpl = result.perplexity;
    figures.liveShare = result.liveShare;
    if (model->run->config.model.retention_gate) {
      LiveCacheSetup gate;
      gate.policy = "learned_gate";  // its default threshold, no budget
      const LiveCacheResult kept = evaluateLiveCache(*model->model, sample, gate);
      figures.gatePpl = kept.perplexity;
      figures.gateLiveShare = kept.liveShare;
    }
    return [this, run, figures] {
      runs_[run].cache = figures;
      runs_[run].problem.clear();
      runs_[run].evaluating = false;
      columnChanged(run);
    };
  });
}

void ComparisonMetricsModel::reevaluate() {
  for (int i = 0; i < runCount(); ++i)
    if (runs_[i].model) evaluate(i, runs_[i].model);
}

bool ComparisonMetricsModel::busy() const {
  return std::any_of(runs_.begin(), runs_.end(), [](const Run& r) { return r.job->busy(); });
}

void ComparisonMetricsModel::waitForIdle() {
  for (Run& r : runs_) r.job->waitForIdle();
}

double ComparisonMetricsModel::value(int row, int run) const {
  const Run& r = runs_.at(run);
  const ProgressSnapshot& p = r.progress;
  const bool trained = r.hasProgress;
  switch (row) {
    case LossRow: return trained ? p.loss : kNotMeasured;
    case ValLossRow: return trained ? p.val_loss : kNotMeasured;
    case AccuracyRow: return trained ? p.accuracy : kNotMeasured;
    case TokensPerSecondRow: return trained && p.tokens_per_second > 0 ? p.tokens_per_second : kNotMeasured;
    case DensePplRow: return r.cache.densePpl;
    case EvictionPplRow: return r.cache.evictionPpl;
    case LiveShareRow: return r.cache.liveShare;
    case GatePplRow: return r.cache.gatePpl;
    case GateLiveShareRow: return r.cache.gateLiveShare;
    case KvBytesRow: return r.kvBytes;
    case LiveKvBytesRow: return r.kvBytes * r.cache.liveShare;
    case EvaluatedStepRow: return r.cache.step >= 0 ? r.cache.step : kNotMeasured;
  }
  return kNotMeasured;
}

QString ComparisonMetricsModel::rowTitle(int row) {
  switch (row) {
    case LossRow: return tr("Training loss");
    case ValLossRow: return tr("Validation loss");
    case AccuracyRow: return tr("Accuracy");
    case TokensPerSecondRow: return tr("Tokens / s");
    case DensePplRow: return tr("PPL, full cache");
    case EvictionPplRow: return tr("PPL with eviction");
    case LiveShareRow: return tr("Live cache");
    case GatePplRow: return tr("PPL, gate decides");
    case GateLiveShareRow: return tr("Live cache, gate decides");
    case KvBytesRow: return tr("KV bytes / token");
    case LiveKvBytesRow: return tr("KV bytes / token, live");
    case EvaluatedStepRow: return tr("Cache figures at step");
  }
  return {};
}

int ComparisonMetricsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : RowCount; }

int ComparisonMetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : runCount(); }

QVariant ComparisonMetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.column() >= runCount()) return {};
  const int row = index.row();
  const Run& r = runs_[index.column()];
  const bool gateRow = row == GatePplRow || row == GateLiveShareRow;
  const bool cacheRow = row == DensePplRow || row == EvictionPplRow || row == LiveShareRow || gateRow || row == LiveKvBytesRow ||
                        row == EvaluatedStepRow;
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole) {
    if (cacheRow && !r.problem.isEmpty()) return r.problem;
    if (gateRow)
      return r.gated ? tr("The learned retention gate applied hard, without a budget: entries whose gate g is below 0.5 leave the cache")
                     : tr("This model has no learned retention gate (model.retention_gate)");
    if (row == EvictionPplRow || row == LiveShareRow)
      return tr("%1 sequences of the validation sample decoded through the cache with %2 at budget %3")
          .arg(kEvalSequences).arg(policy_, budget_);
    return {};
  }
  if (role == Qt::UserRole) return value(row, index.column());
  if (role != Qt::DisplayRole) return {};
  const double v = value(row, index.column());
  if (gateRow && !r.gated) return tr("no gate");
  if (cacheRow && !std::isfinite(v)) {
    if (r.evaluating) return tr("evaluating\u2026");
    if (!r.problem.isEmpty()) return tr("n/a (see tooltip)");
  }
  switch (row) {
    case AccuracyRow:
    case LiveShareRow:
    case GateLiveShareRow: return std::isfinite(v) ? QStringLiteral("%1%").arg(100 * v, 0, 'f', 1) : formatted(v, 0);
    case TokensPerSecondRow:
    case KvBytesRow:
    case LiveKvBytesRow:
    case EvaluatedStepRow: return formatted(v, 0);
    case DensePplRow:
    case EvictionPplRow:
    case GatePplRow: return formatted(v, 2);
    default: return formatted(v, 3);
  }
}

QVariant ComparisonMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal && section < runCount() && role == Qt::ToolTipRole) return runs_[section].experiment;
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return rowTitle(section);
  return section < runCount() ? runs_[section].name : QVariant();
}

void ComparisonMetricsModel::columnChanged(int run) { emit dataChanged(index(0, run), index(RowCount - 1, run)); }

}  // namespace attnlab
