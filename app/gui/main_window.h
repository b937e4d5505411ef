#pragma once
// The desktop window: training controls in the toolbar, the loss chart and the attention heatmap
// side by side, state and errors in the status bar. Training runs in a TrainingSession (worker
// thread); this window only shows what the session publishes.
#include <QMainWindow>
#include <memory>

#include "model/config.h"
#include "snapshots.h"
#include "training_session.h"

class QAction;
class QLabel;
class QProgressBar;

namespace attnlab {

class AttentionMapModel;
class AttentionPanel;
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

  void startTraining();
  // Trains `steps` steps (fewer if the run is shorter) and pauses; once that step's attention map
  // is on screen, saves a picture of the window to `file` and emits captureFinished.
  void captureAfterSteps(int steps, const QString& file);

 signals:
  void captureFinished(bool saved, const QString& message);

 private:
  void buildActions();
  void buildCentralArea();
  void buildStatusBar();

  void startOrPause();
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

  QAction* startPauseAction_ = nullptr;
  QAction* resetAction_ = nullptr;
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
