#include "head_table_view.h"

#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "head_drop_chart.h"
#include "head_selection.h"
#include "head_table_model.h"

namespace attnlab {

namespace {

// CSV names of the columns, in HeadTableModel::Column order.
const char* const kCsvColumns[] = {"layer", "head", "variant", "entropy", "normalised_entropy", "mean_distance", "sink",
                                   "previous_token", "induction", "effective_rank", "ablation_loss_increase",
                                   "gradient_importance", "on"};
static_assert(std::size(kCsvColumns) == HeadTableModel::ColumnCount);

}  // namespace

HeadTableView::HeadTableView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), selection_(context.selection), model_(new HeadTableModel(context.attention, context.session, this)) {
  auto* explain = new QLabel(tr(
      "Each row is one head. Diagnostics describe its attention maps on a batch of the task's sequences (an opened model: "
      "on the probe; previous-token and induction on repeated random sequences); importance is how much the validation "
      "loss (an opened model: the probe's next-token loss) rises without it. "
      "Hover a column title for its formula, click a row to select the head everywhere, untick <b>On</b> to switch a "
      "head off in every view (not in training)."), this);
  explain->setWordWrap(true);
  status_ = new QLabel(this);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  allOn_ = new QPushButton(tr("All heads on"), this);
  allOn_->setToolTip(tr("Switch every head back on"));
  connect(allOn_, &QPushButton::clicked, model_, &HeadTableModel::switchAllOn);

  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(HeadTableModel::SortRole);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(HeadTableModel::Layer, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(HeadTableModel::Layer, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(HeadTableModel::Head, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(HeadTableModel::On, QHeaderView::ResizeToContents);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &HeadTableView::selectFromTable);

  chart_ = new HeadDropChart(model_, this);

  auto* top = new QHBoxLayout;
  top->addWidget(status_, 1);
  top->addWidget(allOn_);
  splitter_ = new QSplitter(Qt::Vertical, this);
  splitter_->addWidget(table_);
  splitter_->addWidget(chart_);
  splitter_->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(explain);
  layout->addLayout(top);
  layout->addWidget(splitter_, 1);

  connect(context.attention, &AttentionMapModel::mapChanged, this, &HeadTableView::followSelection);
  connect(selection_, &HeadSelection::headChanged, this, &HeadTableView::followSelection);
  connect(model_, &QAbstractItemModel::modelReset, this, &HeadTableView::followSelection);
  connect(model_, &HeadTableModel::curvesChanged, this, &HeadTableView::redrawCurves);
  connect(model_, &QAbstractItemModel::dataChanged, this, &HeadTableView::updateStatus);
  connect(model_, &QAbstractItemModel::modelReset, this, &HeadTableView::updateStatus);
  connect(model_, &QAbstractItemModel::modelReset, this, &HeadTableView::fitTableHeight);
  connect(model_, &HeadTableModel::busyChanged, this, &HeadTableView::updateStatus);
  connect(model_, &HeadTableModel::failed, this, [this](const QString& message) { status_->setText(message); });
  model_->setActive(false);  // computes only while shown
  redrawCurves();
  updateStatus();
  followSelection();
}

void HeadTableView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  model_->setActive(true);
  fitTableHeight();
}

void HeadTableView::settle() {
  model_->waitForIdle();
  QCoreApplication::processEvents();
}

void HeadTableView::fitTableHeight() {
  const int rows = model_->rowCount();
  const int total = splitter_->height();
  if (rows == fittedRows_ || !isVisible() || total <= 0) return;
  const int wanted = table_->horizontalHeader()->height() + rows * table_->verticalHeader()->defaultSectionSize() +
                     2 * table_->frameWidth() + 6;
  const int tableHeight = std::min(std::max(wanted, total / 4), total * 3 / 5);
  splitter_->setSizes({tableHeight, total - tableHeight});
  fittedRows_ = rows;
}

void HeadTableView::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  model_->setActive(false);
}

void HeadTableView::selectFromTable() {
  if (following_) return;
  const QModelIndex current = proxy_->mapToSource(table_->currentIndex());
  if (current.isValid()) selection_->select(model_->layerOf(current.row()), model_->headOf(current.row()));
}

void HeadTableView::followSelection() {
  if (model_->rowCount() == 0) return;
  const QModelIndex row = proxy_->mapFromSource(model_->index(model_->rowOf(selection_->layer(), selection_->head()), 0));
  if (!row.isValid() || table_->currentIndex().row() == row.row()) return;
  following_ = true;
  table_->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->scrollTo(row);
  following_ = false;
}

void HeadTableView::redrawCurves() {
  chart_->redraw();
  updateStatus();
}

void HeadTableView::updateStatus() {
  allOn_->setEnabled(model_->anyOff());
  if (model_->rowCount() == 0) {
    status_->setText(tr("No model yet: press Train (F5)."));
    return;
  }
  QStringList parts;
  const bool opened = model_->onOpenedModel();
  if (model_->diagnosticsStep() < 0) parts << tr("diagnostics: computing\u2026");
  else if (opened) parts << tr("diagnostics on the probe (%1 tokens; previous-token and induction on repeated random tokens)").arg(model_->probeLength());
  else parts << tr("diagnostics at step %1").arg(model_->diagnosticsStep());
  if (const LiveHeadImportance* importance = model_->importance()) {
    QString shown = opened ? tr("importance on the probe: next-token loss %1").arg(importance->shown.loss, 0, 'f', 3)
                           : tr("importance at step %1 on 4 validation batches: loss %2").arg(model_->importanceStep()).arg(importance->shown.loss, 0, 'f', 3);
    if (std::isfinite(importance->shown.accuracy)) shown += tr(", accuracy %1").arg(importance->shown.accuracy, 0, 'f', 3);
    parts << shown;
  } else {
    parts << tr("importance: computing\u2026");
  }
  int off = 0;
  for (int row = 0; row < model_->rowCount(); ++row) off += !model_->isOn(model_->layerOf(row), model_->headOf(row));
  if (off > 0) parts << tr("<b>%1 head(s) switched off</b>").arg(off);
  if (model_->busy()) parts << tr("updating\u2026");
  status_->setText(parts.join(QStringLiteral(" \u00b7 ")));
}

bool HeadTableView::hasExportData() const { return model_->rowCount() > 0; }

void HeadTableView::writeCsv(QTextStream& out) const {
  QStringList header;
  for (const char* name : kCsvColumns) header << QString::fromLatin1(name);
  out << header.join(QLatin1Char(',')) << '\n';
  for (int row = 0; row < model_->rowCount(); ++row) {
    QStringList fields;
    for (int column = 0; column < HeadTableModel::ColumnCount; ++column) {
      const QVariant v = model_->data(model_->index(row, column), HeadTableModel::SortRole);
      if (!v.isValid()) fields << QString();
      else if (column == HeadTableModel::Variant) fields << csvField(v.toString());
      else if (v.typeId() == QMetaType::Double) fields << QString::number(v.toDouble(), 'g', 7);
      else fields << v.toString();
    }
    out << fields.join(QLatin1Char(',')) << '\n';
  }
}

void HeadTableView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
