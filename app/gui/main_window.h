#pragma once
// The desktop window: training controls in the toolbar, the experiment panel docked on the left,
// the loss chart and the attention heatmap side by side, state and errors in the status bar.
// Training runs in a TrainingSession (worker thread); this window only shows what the session
// publishes. Files (save, open, recent, autosave) are ExperimentFiles' business.
#include <QMainWindow>
#include <memory>

#include "model/config.h"
#include "snapshots.h"
#include "training_session.h"

class QAction;
class QLabel;
class QMenu;
class QProgressBar;

namespace attnlab {

class AttentionMapModel;
class AttentionPanel;
class ExperimentFiles;
class ExperimentPanel;
class LossChartView;
class LossHistoryModel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(const ExperimentConfig& config, const QString& presetName, QWidget* parent = nullptr);

  TrainingSession& session() { return *session_; }
  const LossHistoryModel& lossHistory() const { return *history_; }
  const AttentionMapModel& attentionMap() const { return *attention_; }
  AttentionMapModel& attentionMap() { return *attention_; }

  ExperimentPanel& experimentPanel() { return *panel_; }
  ExperimentFiles& files() { return *files_; }
  const ExperimentConfig& config() const { return config_; }

  void startTraining();
  // Makes `config` the experiment on display, after asking about unsaved trained steps.
  // Returns false when the user kept the current one.
  bool applyExperiment(const ExperimentConfig& config);
  // Loads preset `name` into the panel and applies it (asking first, as applyExperiment does).
  bool applyPreset(const QString& name);
  // Window geometry and dock layout from the last session; from then on they are saved on close.
  void restoreLayout();
  // The experiment last applied or opened, if it is still valid. Returns whether it was restored.
  bool restoreLastExperiment();
  // Trains `steps` steps (fewer if the run is shorter) and pauses; once that step's attention map
  // is on screen, saves a picture of the window to `file` and emits captureFinished.
  void captureAfterSteps(int steps, const QString& file);

 signals:
  void captureFinished(bool saved, const QString& message);

 private:
  void closeEvent(QCloseEvent* event) override;

  void buildActions();
  void buildFileMenu();
  void buildPresetsMenu();
  void buildCentralArea();
  void buildStatusBar();

  void train();
  void stepOnce();
  void resetWithQuestion();
  bool startFresh(int pauseAtStep);
  void showOpened(const ExperimentConfig& config, const QString& dir);
  void showDocumentState();
  void rememberExperiment();  // as the last experiment, for the next start
  void fillRecentMenu();
  void showState(TrainingSession::State state);
  void showProgress(const ProgressSnapshot& progress);
  void showTrace(const std::shared_ptr<const TraceSnapshot>& trace);
  void showError(const QString& message);
  void clearResults();
  void saveCapture();

  ExperimentConfig config_;
  QString presetName_;
  TrainingSession* session_;
  LossHistoryModel* history_;
  AttentionMapModel* attention_;

  ExperimentPanel* panel_ = nullptr;
  ExperimentFiles* files_ = nullptr;
  QAction* trainAction_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* stepAction_ = nullptr;
  QAction* resetAction_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* experimentLabel_ = nullptr;
  bool persistLayout_ = false;  // set by restoreLayout(); screenshots and tests leave settings alone
  QProgressBar* progress_ = nullptr;
  QLabel* lossLabel_ = nullptr;
  LossChartView* chart_ = nullptr;
  AttentionPanel* attentionPanel_ = nullptr;

  struct Capture {
    int step = 0;  // 0: no capture requested
    QString file;
  } capture_;
};

}  // namespace attnlab
