#pragma once
// The comparison's metrics table: one column per run, one row per metric. Training figures
// (loss, validation loss, accuracy, tokens/s) follow each run's progress; the cache figures come
// from decoding a fixed validation sample through the KV cache (kv/live_cache_eval.h), once with
// every entry kept (dense), once under the chosen eviction policy and budget, and for models with
// the learned retention gate once more with the gate alone deciding what stays; on a
// BackgroundJob per run from the run's ModelSnapshot, so the UI thread never computes them.
#include <QAbstractTableModel>
#include <QString>
#include <memory>
#include <vector>

#include "snapshots.h"

namespace attnlab {

class BackgroundJob;

class ComparisonMetricsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Row {
    LossRow,
    ValLossRow,
    AccuracyRow,
    TokensPerSecondRow,
    DensePplRow,
    EvictionPplRow,
    LiveShareRow,
    GatePplRow,        // the learned retention gate alone decides (threshold 0.5, no budget); gated models only
    GateLiveShareRow,
    KvBytesRow,      // per token, every entry kept
    LiveKvBytesRow,  // per token on average under the eviction policy
    EvaluatedStepRow,
    RowCount
  };
  // Validation sequences decoded per evaluation (from the run's first evaluation batch).
  static constexpr int kEvalSequences = 12;

  explicit ComparisonMetricsModel(QObject* parent = nullptr);
  ~ComparisonMetricsModel() override;

  // One column per run, titled by `names` (short; the experiment's name is the tooltip); forgets
  // every figure.
  void setRuns(const QStringList& names, const std::vector<ExperimentConfig>& configs);
  int runCount() const { return static_cast<int>(runs_.size()); }
  // Policy name (EvictionPolicyRegistry) and budget per KV head ("16", "25%", "unlimited"). Returns "" or why not; on
  // success every run with a model is evaluated again.
  QString setEviction(const QString& policy, const QString& budget);
  QString policy() const { return policy_; }
  QString budget() const { return budget_; }

  void setProgress(int run, const ProgressSnapshot& progress);
  void clearRun(int run);  // the run was reset: its figures go
  // The run now holds another experiment (a watched run folder's): its title and what it is.
  void renameRun(int run, const QString& name, const ExperimentConfig& config);
  // Decodes the snapshot's validation sample through the cache, off the UI thread.
  void evaluate(int run, std::shared_ptr<const ModelSnapshot> model);
  void reevaluate();  // every run that has a model, with the current eviction setting
  bool busy() const;
  void waitForIdle();  // tests

  // The raw figure (NaN when not known) and, for the cache rows, why it is missing.
  double value(int row, int run) const;
  QString problem(int run) const { return runs_.at(run).problem; }
  static QString rowTitle(int row);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void busyChanged(bool busy);

 private:
  struct CacheFigures {
    double densePpl = kNotMeasured, evictionPpl = kNotMeasured, liveShare = kNotMeasured;
    double gatePpl = kNotMeasured, gateLiveShare = kNotMeasured;
    int step = -1;
  };
  struct Run {
    QString name, experiment;
    bool gated = false;
    double kvBytes = 0;
    ProgressSnapshot progress;
    bool hasProgress = false;
    CacheFigures cache;
    QString problem;  // why the cache figures are missing
    bool evaluating = false;
    std::shared_ptr<const ModelSnapshot> model;  // the last one evaluated or being evaluated
    BackgroundJob* job = nullptr;
  };
  void columnChanged(int run);

  std::vector<Run> runs_;
  QString policy_ = QStringLiteral("h2o");
  QString budget_ = QStringLiteral("16");
};

}  // namespace attnlab
