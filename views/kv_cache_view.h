#pragma once
// The KV-cache view: a generation panel (prompt, new tokens, eviction policy, budget and scope,
// extra policies to compare, the matched live-cache protocol) and, for the selected layer and
// head, the occupancy raster (decoding step across, token position down) beside Qt Charts of live
// entries and KV bytes per step and of the teacher-forced loss per position, one line per run.
// "Open study report..." browses a folder written by `attnlab-cli study live-cache`.
// Computation runs in KvCacheModel's background job; the first time the view is shown with a
// model it runs once with the panel's defaults.
#include <QWidget>
#include <memory>

#include "view_export.h"

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace attnlab {

class AttentionMapModel;
class KvCacheModel;
class KvOccupancyRaster;
class TrainingSession;
struct RunData;

class KvCacheView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  KvCacheView(AttentionMapModel* attention, TrainingSession* session, QWidget* parent = nullptr);

  KvCacheModel* model() const { return model_; }
  KvOccupancyRaster* raster() const { return raster_; }
  void run();  // generates with the panel's settings

  QString exportName() const override;
  QWidget* exportWidget() override;
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* buildPanel();
  void followSnapshot();
  void maybeAutoRun();
  void showResult();
  void showSelection();
  void redrawCharts();
  void openStudyReport();
  int shownLayer() const;
  int shownKvHead() const;

  AttentionMapModel* attention_;
  TrainingSession* session_;
  KvCacheModel* model_;
  QComboBox* promptSource_;
  QLineEdit* promptText_;
  QSpinBox* tokens_;
  QComboBox* policy_;
  QLineEdit* budget_;
  QComboBox* scope_;
  QToolButton* compare_;
  QCheckBox* matched_;
  QPushButton* runButton_;
  QProgressBar* busy_;
  QLabel* message_;
  QLabel* headLabel_;
  QComboBox* runPicker_;
  QWidget* results_;
  KvOccupancyRaster* raster_;
  QChartView* liveChart_;
  QChartView* bytesChart_;
  QChartView* lossChart_;
  const RunData* shownRun_ = nullptr;  // the experiment the result belongs to
  bool autoRunDone_ = false;
};

}  // namespace attnlab
