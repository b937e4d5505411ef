#pragma once
// The Spectra tab of the main window (and of any window that shows a run): the spectra view fed by
// a SpectrumHistory of the run's model snapshots, following the shared layer/head selection both
// ways (the view's "all" head overlays the layer's heads and is the tab's own toggle).
#include <QWidget>
#include <utility>

#include "view_context.h"
#include "view_export.h"

class QLabel;
class QTimer;

namespace attnlab {

class AttentionMapModel;
class HeadSelection;
class SpectrumHistory;
class SpectrumModel;
class SpectrumView;
class TrainingSession;

class SpectraTab : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  // Everything comes from the model snapshots the context's traces carry.
  explicit SpectraTab(const ViewContext& context, QWidget* parent = nullptr);

  SpectrumModel* model() const { return model_; }
  SpectrumHistory* history() const { return history_; }
  SpectrumView* view() const { return view_; }
  // Blocks until the latest trace's frame is computed and shown (screenshots, tests).
  void waitForResults();

  QString exportName() const override;
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void showSeries();          // the history's latest series into the view's model
  void followSharedSelection();
  void shareSelection();

  AttentionMapModel* attention_;
  HeadSelection* selection_;
  SpectrumModel* model_;
  SpectrumHistory* history_;
  SpectrumView* view_;
  QLabel* error_;
  QTimer* redrawTimer_;
  bool stale_ = false;                          // a series arrived while hidden
  bool applying_ = false;                       // inside setSeries
  std::pair<int, int> sharedSelection_{-1, -1};  // the shared layer/head last followed
};

}  // namespace attnlab
