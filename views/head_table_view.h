#pragma once
// Every head's diagnostics and importance as a sortable table, with the head-drop curves beneath
// (map diagnostics and head importance). Clicking a row selects that head in every view, and the row follows a head
// selected elsewhere. Each head has an on/off box: switching a head off ablates it in every view
// (the trace is recomputed without it), never in training; "All heads on" restores them.
#include <QWidget>

#include "view_context.h"
#include "view_export.h"

class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;

namespace attnlab {

class AttentionMapModel;
class HeadDropChart;
class HeadSelection;
class HeadTableModel;
class TrainingSession;

class HeadTableView : public QWidget, public ExportableView {
  Q_OBJECT
 public:
  explicit HeadTableView(const ViewContext& context, QWidget* parent = nullptr);

  HeadTableModel* tableModel() const { return model_; }
  QTableView* table() const { return table_; }
  HeadDropChart* chartView() const { return chart_; }
  // Blocks until the numbers being computed are in and drawn: for screenshots and exports only.
  void settle();

  QString exportName() const override { return QStringLiteral("head-table"); }
  QWidget* exportWidget() override { return this; }
  bool hasExportData() const override;
  void writeCsv(QTextStream& out) const override;

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  void selectFromTable();
  void followSelection();
  void redrawCurves();
  void updateStatus();
  void fitTableHeight();  // the table as tall as its rows (up to 60%), the chart below takes the rest

  HeadSelection* selection_;
  HeadTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  HeadDropChart* chart_;
  QLabel* status_;
  QPushButton* allOn_;
  QSplitter* splitter_;
  int fittedRows_ = -1;  // rows the splitter was last fitted to
  bool following_ = false;  // the table's selection is being set to the shared one
};

}  // namespace attnlab
