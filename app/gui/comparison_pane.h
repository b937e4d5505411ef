#pragma once
// One run of a comparison: its own training session, loss history and attention map, a header
// (experiment, state, step, loss, and a note when the linked selection does not fit this model)
// and the view of the comparison's current kind, made for this run. A pane may instead follow a run
// folder that a trainer elsewhere writes into (the PyTorch export's train.py): each new checkpoint
// opens in it, and the comparison's Train all leaves it alone.
#include <QFrame>
#include <memory>

#include "experiment/experiment_config.h"
#include "snapshots.h"
#include "training_session.h"
#include "view_kind.h"

class QLabel;
class QScrollArea;
class QVBoxLayout;

namespace attnlab {

class AttentionMapModel;
class RunFolderWatcher;
class HeadSelection;
class ModelOpener;
class SharedColourScale;
class LengthSweep;
class KvPolicyLink;
class LossHistoryModel;

class ComparisonPane : public QFrame {
  Q_OBJECT
 public:
  ComparisonPane(int index, const ExperimentConfig& config, QWidget* parent = nullptr);

  int index() const { return index_; }
  QString runName() const;    // "1 · Induction heads"
  QString shortName() const;  // "1: softmax+gate", for narrow columns
  const ExperimentConfig& config() const { return config_; }
  // The configuration the next start() trains (threads capped by the comparison's schedule).
  void setThreads(int threads) { config_.train.threads = threads; }
  TrainingSession* session() const { return session_; }
  LossHistoryModel* history() const { return history_; }
  AttentionMapModel* attention() const { return attention_; }
  HeadSelection* selection() const { return selection_; }
  const ViewInstance& viewInstance() const { return view_; }
  const ProgressSnapshot& progress() const { return progress_; }
  int tracedStep() const { return tracedStep_; }

  // Follows a run folder (RunFolderWatcher): "" and the current checkpoint opens, or the one-line reason.
  QString watch(const QString& dir);
  void stopWatching();
  bool watching() const;
  QString watchedFolder() const;  // the checkpoint folder followed ("" when none)
  void start();  // trains the pane's configuration from scratch (nothing while watching or showing a model folder)
  // Shows the model of a Hugging Face folder instead (loaded on a worker, as File > Open Model
  // does): nothing trains, every view shows it, and a refusal is said in the header.
  void openModelFolder(const QString& dir);
  QString modelFolder() const { return folder_; }  // "" for a pane that trains its configuration
  // Queued behind other runs (training one after another): said in the header until it starts.
  void setWaiting(bool waiting);
  void setViewKind(int kind);  // an index of viewKinds()
  // The colour scale the views made from now on share with the other runs (null: their own).
  void setColourScale(const SharedColourScale* scale) { colourScale_ = scale; }
  void setKvLink(KvPolicyLink* link) { kvLink_ = link; }
  void setLengthSweep(LengthSweep* sweep) { lengths_ = sweep; }  // the runs' length evaluations, one chart for all
  // A line under the header, e.g. why the linked selection shows another head here.
  void setNote(const QString& note);
  QString headerText() const;

 signals:
  void traced(int index, const std::shared_ptr<const attnlab::TraceSnapshot>& trace);
  void progressed(int index, const attnlab::ProgressSnapshot& progress);
  void stateChanged(int index, attnlab::TrainingSession::State state);
  void watchedCheckpointOpened(int index, int steps);  // a watched run's checkpoint of `steps` steps is on display

 private:
  void updateHeader();

  int index_;
  ExperimentConfig config_;
  TrainingSession* session_;
  LossHistoryModel* history_;
  AttentionMapModel* attention_;
  HeadSelection* selection_;
  QLabel* header_;
  QLabel* note_;
  QVBoxLayout* layout_;
  QScrollArea* viewArea_;
  ViewInstance view_;
  const SharedColourScale* colourScale_ = nullptr;
  KvPolicyLink* kvLink_ = nullptr;
  LengthSweep* lengths_ = nullptr;
  ProgressSnapshot progress_;
  bool hasProgress_ = false;
  int tracedStep_ = -1;
  QString error_;
  bool waiting_ = false;
  RunFolderWatcher* watcher_ = nullptr;  // while following a run folder
  QString watchStatus_;
  QString folder_;             // the opened model's folder, if any
  QString modelSummary_;       // its architecture and shape, for the header
  ModelOpener* opener_ = nullptr;
};

}  // namespace attnlab
