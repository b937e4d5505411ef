#pragma once
// The desktop window: training controls in the toolbar, the experiment panel docked on the left;
// in the centre one tab per view kind (view_kinds.cpp) with the probe editor and the shared
// layer/head selection above the views that show the probe; state and errors in the status bar. Training runs in a TrainingSession (worker thread); this window only shows
// what the session publishes. Files (save, open, recent, autosave) are ExperimentFiles' business.
#include <QMainWindow>
#include <memory>

#include "finished_run_dialog.h"
#include "experiment/experiment_config.h"
#include "snapshots.h"
#include "training_session.h"
#include "view_kind.h"

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;
class QTabBar;

namespace attnlab {

class AttentionMapModel;
class HeadSelection;
class LastState;
class TourPanel;
class ExperimentFiles;
class ExperimentPanel;
class LossHistoryModel;
class ModelOpener;
class ModelFineTuner;
struct OpenedHfModel;
class ProbeEditor;
class RunFolderWatcher;
class SelectionBar;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(const ExperimentConfig& config, const QString& presetName, QWidget* parent = nullptr);

  TrainingSession& session() { return *session_; }
  const LossHistoryModel& lossHistory() const { return *history_; }
  const AttentionMapModel& attentionMap() const { return *attention_; }
  AttentionMapModel& attentionMap() { return *attention_; }
  HeadSelection& selection() { return *selection_; }  // the layer, head and query every view shows
  TourPanel* tourPanel() const { return tours_; }    // the tour dock, hidden until a tour starts

  ExperimentPanel& experimentPanel() { return *panel_; }
  ExperimentFiles& files() { return *files_; }
  RunFolderWatcher& runWatcher() { return *watcher_; }
  const ExperimentConfig& config() const { return config_; }

  // The central tabs: one per entry of viewKinds(), in its order.
  void showView(int index);
  void showView(const QString& id);  // an id of viewKinds()
  int currentView() const;
  ExportableView* exportable(int index) const { return views_.at(index).exportable; }  // null: no export
  // Blocks until the view's background computation for the latest trace is done and shown
  // (before a capture; the views that compute off the UI thread would otherwise lag a step).
  void settleView(int index);
  // The first tab's view of type V (null when there is none).
  template <class V>
  V* view() const {
    for (const ViewInstance& made : views_)
      if (auto* v = qobject_cast<V*>(made.widget)) return v;
    return nullptr;
  }
  ProbeEditor* probeEditor() const { return probe_; }
  QTabBar* tabs() const { return tabs_; }  // one tab per view kind, above the probe row

  void startTraining();
  // Makes `config` the experiment on display, after asking about unsaved trained steps.
  // Returns false when the user kept the current one.
  bool applyExperiment(const ExperimentConfig& config);
  // Loads preset `name` into the panel and applies it (asking first, as applyExperiment does).
  bool applyPreset(const QString& name);
  // Window geometry and dock layout from the last session; from then on they are saved on close.
  void restoreLayout();
  // The last trained state (last_state.h: the autosave after a crash, if recovered, else the
  // folder last saved or opened, with its weights), else the experiment last applied, if it is
  // still valid; the status bar says what was not reopened. Returns whether one was restored.
  bool restoreLastExperiment();
  LastState* lastState() const { return lastState_; }  // set by restoreLayout()
  // Answers Train on a finished run (finished_run_dialog.h); tests replace the dialog.
  void setFinishedRunPrompt(FinishedRunPrompt prompt) { finishedRunPrompt_ = std::move(prompt); }
  // Trains `steps` steps (fewer if the run is shorter) and pauses; once that step's attention map
  // is on screen, saves a picture of the window to `file` (if not empty), exports the current
  // view to `exportFile` (if not empty; PNG, SVG or CSV by its suffix) and emits captureFinished.
  void captureAfterSteps(int steps, const QString& file, const QString& exportFile = {});

  // Opening a Hugging Face model folder instead of training an experiment (main_window_models.cpp):
  // File > Open Model's dialog, and the load itself (on a worker; a refusal is a message box and
  // keeps the current experiment). captureWhenOpened: as captureAfterSteps, once the model's probe shows.
  void openModelWithDialog();
  void openModelFolder(const QString& dir);
  void captureWhenOpened(const QString& file, const QString& exportFile = {});
  ModelOpener& modelOpener() { return *opener_; }
  ModelFineTuner& modelFineTuner() { return *fineTuner_; }  // Train and Save on an opened model

 signals:
  void captureFinished(bool saved, const QString& message);

 private:
  void closeEvent(QCloseEvent* event) override;

  void buildActions();
  void buildFileMenu();
  void buildPresetsMenu();
  void buildCentralArea();
  void buildViewMenus();
  void showGuide();
  void buildStatusBar();

  void train();
  void continueOrStartOver();  // Train on a finished run
  void stepOnce();
  void resetWithQuestion();
  bool startFresh(int pauseAtStep);
  void showOpened(const ExperimentConfig& config, const QString& dir);
  void showDocumentState();
  void rememberExperiment();  // as the last experiment, for the next start
  void fillRecentMenu();
  void showState(TrainingSession::State state);
  void showProgress(const ProgressSnapshot& progress);
  void learnTrainingRate(double stepsPerSecond);  // the panel's time estimate from this run's speed
  void showTrace(const std::shared_ptr<const TraceSnapshot>& trace);
  void showError(const QString& message);
  void clearResults();
  void saveCapture();
  void showOpenedModel(const std::shared_ptr<OpenedHfModel>& opened);
  void refuseModel(const QString& dir, const QString& message);
  void showTracing(int tokens);  // an opened model's long trace is on its way: a busy bar
  void tracingDone();
  void connectFineTuner();
  void showFineTuning(const ExperimentConfig& config);
  void saveExperiment(bool askFolder);  // File > Save (As): an opened model first becomes a checkpoint's trainer

  ExperimentConfig config_;
  QString presetName_;
  double flopsPerStep_ = 0;  // of config_, computed at its first progress report (0: not yet)
  TrainingSession* session_;
  LossHistoryModel* history_;
  AttentionMapModel* attention_;
  HeadSelection* selection_;
  TourPanel* tours_ = nullptr;  // the tour dock (tour_panel.h)

  ExperimentPanel* panel_ = nullptr;
  ExperimentFiles* files_ = nullptr;
  LastState* lastState_ = nullptr;  // only while settings persist (restoreLayout)
  FinishedRunPrompt finishedRunPrompt_;
  RunFolderWatcher* watcher_ = nullptr;  // File > Watch Run Folder
  ModelOpener* opener_ = nullptr;
  ModelFineTuner* fineTuner_ = nullptr;
  QAction* trainAction_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* stepAction_ = nullptr;
  QAction* resetAction_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* experimentLabel_ = nullptr;
  bool persistLayout_ = false;  // set by restoreLayout(); screenshots and tests leave settings alone
  QProgressBar* progress_ = nullptr;
  QLabel* lossLabel_ = nullptr;
  QTabBar* tabs_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QWidget* attentionBar_ = nullptr;  // probe editor and selection, shown above the attention views
  ProbeEditor* probe_ = nullptr;
  SelectionBar* selectionBar_ = nullptr;
  std::vector<ViewInstance> views_;  // one per viewKinds() entry

  struct Capture {
    int step = 0;  // 0: no capture requested
    QString file;
    QString exportFile;
    bool whenOpened = false;  // capture the first trace of an opened model instead
  } capture_;
};

}  // namespace attnlab
