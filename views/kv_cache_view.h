#pragma once
// The KV-cache view: a generation panel (prompt, new tokens, eviction policy, budget and scope,
// extra policies to compare, the matched live-cache protocol) and, for the selected layer and
// head, the occupancy raster (decoding step across, token position down) beside Qt Charts of live
// entries and KV bytes per step and of the teacher-forced loss per position, one line per run.
// "Open study report..." browses a folder written by `attnlab-cli study live-cache`.
// Computation runs in KvCacheModel's background job. The first time the view is shown with a
// model it runs with the panel's defaults; with "follow training" on (the default) it runs again,
// at most every kFollowMs, while it is shown and the model trains on or the probe changes.
#include <QElapsedTimer>
#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "core/settings.h"
#include "kv_policy_link.h"
#include "view_context.h"
#include "view_export.h"

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTimer;
class QToolButton;

namespace attnlab {

class AttentionMapModel;
class HeadSelection;
class KvCacheModel;
class KvOccupancyRaster;
class TrainingSession;
struct ModelConfig;
struct RunData;

class KvCacheView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  // Needs only the model snapshots the context's attention model carries.
  explicit KvCacheView(const ViewContext& context, QWidget* parent = nullptr);

  KvCacheModel* model() const { return model_; }
  KvOccupancyRaster* raster() const { return raster_; }
  void run();  // generates with the panel's settings
  void settle();  // blocks until the generation being computed is shown (captures)
  // Picks the main policy and budget as if chosen by hand (a tour's @kv) and runs when shown.
  // Returns "" or why not (an unknown policy).
  QString setEviction(const QString& policy, const QString& budget);

  QString exportName() const override;
  QWidget* exportWidget() override;
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  QWidget* buildPanel();
  void showPolicySettings();  // rebuilds policySettings_ for the chosen policy
  EvictionChoice choice() const;
  void publishChoice();                              // the user changed the choice: linked views follow
  void takeChoice(const EvictionChoice& choice);     // another linked view's choice
  void followSnapshot();
  void offerUsablePolicies(const ModelConfig& model);  // refused policies disabled, with the reason
  void maybeAutoRun();
  bool outdated() const;  // the model or the probe moved on since the last run
  void showResult();
  void showSelection();
  void redrawCharts();
  void openStudyReport();
  void fitSplitter();  // the square raster's width to the left, the rest to the charts
  int shownLayer() const;
  int shownKvHead() const;

  AttentionMapModel* attention_;
  KvPolicyLink* link_;
  bool takingChoice_ = false;
  const HeadSelection* selection_;
  KvCacheModel* model_;
  QComboBox* promptSource_;
  QLineEdit* promptText_;
  QSpinBox* tokens_;
  QComboBox* policy_;
  QWidget* policySettings_;                      // an editor per setting of the chosen policy
  std::map<QString, Settings> settingsByPolicy_;  // what the user set, kept while switching policies
  QLineEdit* budget_;
  QComboBox* scope_;
  QToolButton* compare_;
  QCheckBox* matched_;
  QCheckBox* follow_;
  QTimer* followTimer_;
  QPushButton* runButton_;
  QProgressBar* busy_;
  QLabel* message_;
  QLabel* headLabel_;
  QComboBox* runPicker_;
  QWidget* results_;
  QSplitter* splitter_;
  bool splitterMoved_ = false;  // the user's own split is kept
  bool policyChosen_ = false;   // else the default follows the model: learned_gate where it has a retention gate
  KvOccupancyRaster* raster_;
  QChartView* liveChart_;
  QChartView* bytesChart_;
  QChartView* lossChart_;
  const RunData* shownRun_ = nullptr;  // the experiment the result belongs to
  bool autoRunDone_ = false;
  QElapsedTimer sinceRun_;
  qint64 lastRunMs_ = 0;       // how long the last run took
  int ranStep_ = -1;           // model step and probe of the last run
  std::vector<int> ranProbe_;
};

}  // namespace attnlab
