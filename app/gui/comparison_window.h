#pragma once
// Two to four experiments side by side (Compare menu, or attnlab --compare A,B): a grid of run
// panes, each with its own training session and the view of the chosen kind; one probe for all
// runs that share a vocabulary; one layer/head selection linked across them (SelectionLink); the
// difference of two runs' attention maps; and a metrics table across the runs, with the KV-cache
// figures under one eviction policy and budget. The runs train concurrently (each run's threads
// capped so that together they use no more threads than there are cores, at the same niceness,
// so the scheduler gives each an equal share) or one after another (each with its own threads).
// The comparison saves as one .attnlab-compare file with a checkpoint folder per trained run.
#include <QMainWindow>
#include <memory>
#include <vector>

#include "io/comparison_file.h"
#include "experiment/experiment_config.h"
#include "snapshots.h"
#include "training_session.h"

class QComboBox;
class QGridLayout;
class QLabel;
class QTableView;

namespace attnlab {

class AttentionDifferenceModel;
class AttentionDifferenceView;
class ComparisonMetricsModel;
class ComparisonLengths;
class ComparisonPane;
class LengthSweep;
class ProbeEditor;
class SelectionLink;
class SharedColourScale;
class KvPolicyLink;
struct LoadedCheckpoint;

class ComparisonWindow : public QMainWindow {
  Q_OBJECT
 public:
  static constexpr const char* kFileSuffix = "attnlab-compare";

  // `modelFolders`, when given, has one entry per run: a Hugging Face model folder that run shows
  // instead of training its configuration (ComparisonPane::openModelFolder), or "".
  explicit ComparisonWindow(const std::vector<ExperimentConfig>& configs, QWidget* parent = nullptr, const QStringList& modelFolders = {});
  ~ComparisonWindow() override;
  // Reads a comparison file and the checkpoints it names; returns the window (not shown), or
  // null with `error` set when anything is wrong (nothing is changed then).
  static ComparisonWindow* open(const QString& file, QString& error);

  int paneCount() const { return static_cast<int>(panes_.size()); }
  ComparisonPane* pane(int i) const { return panes_.at(i); }
  SelectionLink* selection() const { return link_; }
  SharedColourScale* colourScale() const { return colourScale_; }  // shared by default
  KvPolicyLink* kvLink() const { return kvLink_; }                 // linked by default
  ComparisonMetricsModel* metrics() const { return metrics_; }
  ComparisonLengths* lengths() const { return lengths_; }  // the one chart of every run's length extrapolation
  AttentionDifferenceModel* difference() const { return difference_; }
  ProbeEditor* probeEditor() const { return probe_; }
  QString probeNote() const;
  bool hasUnsavedSteps() const;  // some run trained steps since it was last saved or opened

  int viewKind() const { return viewKind_; }  // an index of viewKinds()
  void setViewKind(int kind);
  bool oneAfterAnother() const { return oneAfterAnother_; }
  void setOneAfterAnother(bool on);
  int threadsPerRun() const;  // under concurrent training
  void setEviction(const QString& policy, const QString& budget);
  void offerUsablePolicies();  // the metrics picker disables policies a pane's model refuses
  void compare(int a, int b);  // the difference map's two runs
  // Run `index` follows a run folder written elsewhere (ComparisonPane::watch) instead of training
  // here; "" or the one-line reason (nothing changes then).
  QString watchRunFolder(int index, const QString& dir);
  // Run `index` shows a saved run (its weights, history and step, paused there) instead of
  // training its configuration from scratch; that step counts as saved.
  void openTrainedRun(int index, std::unique_ptr<Trainer> trainer);

  void trainAll();
  void pauseAll();
  void resetAll();
  // Writes the file and a checkpoint folder per trained run next to it ("<name>.runs/run-N").
  // Saves happen between training steps; savedAs() reports the outcome.
  void saveAs(const QString& file);
  // What saveAs(file) writes: checkpoint folders (relative to the file) for the trained runs.
  ComparisonDocument documentFor(const QString& file) const;
  // Trains `steps` steps in every run (fewer when a run is shorter), evaluates the metrics and
  // saves a picture of the window to `file` (none when empty); then emits captureFinished.
  void captureAfterSteps(int steps, const QString& file);

 signals:
  void savedAs(const QString& file, const QString& error);
  void captureFinished(bool ok, const QString& message);

 private:
  void closeEvent(QCloseEvent* event) override;

  void buildToolBar();
  void buildCentralArea();
  void buildSidePanel(QWidget* side);
  void layoutGrid();
  void applyDocument(const ComparisonDocument& document);
  void saveWithDialog();
  void openWithDialog();
  void watchWithDialog(int index);
  void paneTraced(int index, const std::shared_ptr<const TraceSnapshot>& trace);
  void paneStateChanged(int index, TrainingSession::State state);
  void evaluateMetrics(int index);
  void updateNotes();
  void updateScheduleLabel();
  void syncSelectionPickers();
  void checkCapture();
  void finishSave();

  std::vector<ComparisonPane*> panes_;
  SelectionLink* link_;
  SharedColourScale* colourScale_;
  KvPolicyLink* kvLink_;
  ComparisonMetricsModel* metrics_;
  AttentionDifferenceModel* difference_;
  AttentionDifferenceView* differenceView_ = nullptr;
  QWidget* differenceBox_ = nullptr;
  LengthSweep* lengthSweep_ = nullptr;
  ComparisonLengths* lengths_ = nullptr;
  QGridLayout* grid_ = nullptr;
  ProbeEditor* probe_ = nullptr;
  QLabel* probeNote_ = nullptr;
  QComboBox* viewPicker_ = nullptr;
  QComboBox* schedulePicker_ = nullptr;
  QLabel* scheduleLabel_ = nullptr;
  QComboBox* layerPicker_ = nullptr;
  QComboBox* headPicker_ = nullptr;
  QComboBox* aPicker_ = nullptr;
  QComboBox* bPicker_ = nullptr;
  QComboBox* policyPicker_ = nullptr;
  QComboBox* budgetPicker_ = nullptr;
  QTableView* table_ = nullptr;

  int viewKind_ = 0;
  int columns_ = 2;
  bool oneAfterAnother_ = false;
  bool chainActive_ = false;  // one after another: start the next run when one finishes
  std::vector<int> sharedProbe_;
  std::vector<int> restoredProbe_;  // a saved probe for run 1 while its model folder opens
  std::vector<int> originalThreads_;
  std::vector<int> savedSteps_;  // per run: the step last saved (or opened)

  struct PendingSave {
    QString file;
    ComparisonDocument document;
    QStringList waiting;  // checkpoint folders not yet reported
    QStringList errors;
  };
  std::unique_ptr<PendingSave> pendingSave_;

  struct Capture {
    int step = 0;  // 0: none requested
    QString file;
    bool evaluating = false;
  } capture_;
};

// Compare > New comparison: asks which experiments (the current one, presets, saved folders, model
// folders) and opens them.
void newComparisonWithDialog(const ExperimentConfig& current, QWidget* parent);
class NewComparisonDialog;
// The window for what an accepted dialog chose (not shown): saved runs open with their weights.
ComparisonWindow* comparisonFromDialog(NewComparisonDialog& dialog);
// Compare > Open comparison: asks for a file and opens it in a new window, or says why not.
void openComparisonWithDialog(QWidget* parent);

}  // namespace attnlab
