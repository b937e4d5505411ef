#pragma once
// Every head of the model on display as one table row: its map diagnostics (on a probe batch
// of the task and on repeated random sequences), its importance (measured on the model as the
// views show it, heads switched off included) and whether it is switched on. Also the head-drop
// curves. Both are computed off the UI thread from each new ModelSnapshot: diagnostics (two small
// forwards) for every snapshot, importance (about 4 x heads evaluations) when the step or the head
// gains changed. A computation running when a newer snapshot arrives finishes and is shown; then
// the newest snapshot waiting is computed (so a busy training run cannot starve the table).
//
// Switching a head off or on goes through TrainingSession::setHeadGains, so the probe is retraced
// and every view (this one included, with the next snapshot) shows the ablated model.
#include <QAbstractTableModel>
#include <QElapsedTimer>
#include <memory>
#include <vector>

#include "analysis/live_head_importance.h"
#include "analysis/layer_diagnostics_probe.h"
#include "analysis/map_diagnostics.h"
#include "snapshots.h"

class QTimer;

namespace attnlab {

class AttentionMapModel;
class BackgroundJob;
class TrainingSession;

class HeadTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Layer, Head, Variant, Entropy, NormalisedEntropy, MeanDistance, Sink, PreviousToken, Induction, EffectiveRank,
    Ablation, Gradient, On, ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;  // the number behind a cell (invalid when not measured yet)
  // The diagnostics probe: this many task sequences (and as many repeated random ones), drawn with this
  // seed; the run's history measures the same probe at each validation step (the training view's curves).
  static constexpr int kProbeBatch = kLayerDiagnosticsBatch;
  static constexpr uint64_t kProbeSeed = kLayerDiagnosticsSeed;
  static constexpr uint64_t kDropOrderSeed = 11;  // the random head-drop order
  // An opened model (no task): previous-token and induction on repeats of this length at most.
  static constexpr int kOpenedRepeatLength = 32;
  // While training runs, each computation rests this many times as long as it took before the next
  // (so it takes at most a quarter of a core from training); otherwise it runs as soon as asked.
  static constexpr int kRestWhileTraining = 3;

  HeadTableModel(AttentionMapModel* attention, TrainingSession* session, QObject* parent = nullptr);
  ~HeadTableModel() override;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  // Rows are heads in (layer, head) order.
  int rowOf(int layer, int head) const { return layer * heads_ + head; }
  int layerOf(int row) const { return heads_ ? row / heads_ : 0; }
  int headOf(int row) const { return heads_ ? row % heads_ : 0; }

  // On/off as asked of the session (the next snapshot shows it).
  bool isOn(int layer, int head) const;
  void setHeadOn(int layer, int head, bool on);
  void switchAllOn();
  bool anyOff() const;

  // Computes only while active (a view shows it); a snapshot that arrived meanwhile is computed on activation.
  void setActive(bool active);
  bool busy() const;
  // Until the newest snapshot's numbers are computed and delivered, resting skipped: for tests,
  // screenshots and exports.
  void waitForIdle();

  // What the table shows.
  const std::vector<std::vector<MapDiagnostics>>& diagnostics() const { return diagnostics_; }
  const LiveHeadImportance* importance() const { return importance_.get(); }
  int diagnosticsStep() const { return diagnosticsStep_; }
  // The snapshot is of a model opened from a folder: diagnostics and importance are on the probe.
  bool onOpenedModel() const { return latest_ && latest_->run && !latest_->run->openedName.empty(); }
  int probeLength() const { return static_cast<int>(latestProbe_.size()); }
  int importanceStep() const { return importanceStep_; }
  bool hasAnswers() const;  // the curves show accuracy (else loss)

 signals:
  void curvesChanged();   // new importance (and head-drop curves), or cleared
  void busyChanged(bool busy);
  void failed(const QString& message);

 private:
  struct ProbeCache;  // the diagnostics probe of the current run (touched only on the diagnostics job's thread)
  struct Pace {
    QTimer* retry = nullptr;  // fires when the computation may run again
    qint64 readyAt = 0;       // ms on clock_
  };

  void snapshotArrived();
  void resetShape();
  void schedule();  // submits what is wanted when its job is free and its pace allows
  bool paced(Pace& pace);  // true when it may run now; else arms the retry
  void ran(Pace& pace, qint64 tookMs);
  void catchUp();  // drops the rest: computes what is waiting now
  void submitDiagnostics();
  void submitImportance();
  bool importanceWanted() const;
  QVariant number(int row, int column) const;
  QVariant tint(int row, int column) const;
  void refreshRows();  // on/off (and the greyed text of heads that are off) changed

  AttentionMapModel* attention_;
  TrainingSession* session_;
  BackgroundJob* diagnosticsJob_;
  BackgroundJob* importanceJob_;
  std::shared_ptr<ProbeCache> probeCache_;
  bool active_ = true;
  QElapsedTimer clock_;
  Pace diagnosticsPace_, importancePace_;

  int layers_ = 0, heads_ = 0;
  std::vector<QString> variants_;  // per layer
  std::shared_ptr<const ModelSnapshot> latest_;  // the newest snapshot seen
  bool diagnosticsPending_ = false;              // latest_ not yet sent to the diagnostics job
  std::vector<std::vector<MapDiagnostics>> diagnostics_;
  int diagnosticsStep_ = -1;
  std::shared_ptr<const LiveHeadImportance> importance_;
  int importanceStep_ = -1;
  std::shared_ptr<const RunData> importanceRun_;  // the run it was asked on
  std::vector<int> importanceProbe_;              // an opened model's probe it was asked on
  std::vector<int> latestProbe_;                  // the probe of latest_'s trace
  HeadGains importanceGains_;        // gains of the importance shown or being computed
  int importanceRequestedStep_ = -1;  // step of the importance shown or being computed
};

}  // namespace attnlab
