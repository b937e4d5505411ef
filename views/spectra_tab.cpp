#include "spectra_tab.h"

#include <QContextMenuEvent>
#include <QLabel>
#include <QMenu>
#include <QTextStream>
#include <QTimer>
#include <QVBoxLayout>

#include "attention_map_model.h"
#include "head_selection.h"
#include "spectrum_history.h"
#include "spectrum_model.h"
#include "spectrum_view.h"

namespace attnlab {

namespace {
constexpr int kRedrawMs = 250;
}  // namespace

SpectraTab::SpectraTab(const ViewContext& context, QWidget* parent)
    : QWidget(parent),
      attention_(context.attention),
      selection_(context.selection),
      model_(new SpectrumModel(this)),
      history_(new SpectrumHistory(context.attention, this)),
      view_(new SpectrumView(model_, this)),
      error_(new QLabel(this)),
      redrawTimer_(new QTimer(this)) {
  view_->setSharedSelection(true);  // the window's layer/head selection picks the head
  error_->setStyleSheet(QStringLiteral("color: #b00020"));
  error_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addWidget(view_, 1);
  layout->addWidget(error_);

  // Frames come in during training whether or not the tab is shown (the history needs them);
  // the charts are redrawn only when it is, and at most every kRedrawMs (a redraw of the charts
  // costs the UI thread tens of milliseconds).
  redrawTimer_->setSingleShot(true);
  redrawTimer_->setInterval(kRedrawMs);
  connect(history_, &SpectrumHistory::seriesChanged, this, [this] {
    error_->hide();
    stale_ = true;
    if (isVisible() && !redrawTimer_->isActive()) showSeries();
  });
  connect(redrawTimer_, &QTimer::timeout, this, [this] {
    if (stale_ && isVisible()) showSeries();
  });
  connect(history_, &SpectrumHistory::failed, this, [this](const QString& message) {
    error_->setText(tr("Spectra: %1").arg(message));
    error_->show();
  });
  connect(attention_, &AttentionMapModel::mapChanged, this, &SpectraTab::followSharedSelection);
  connect(attention_, &AttentionMapModel::mapChanged, this,
          [this] { view_->setModelName(attention_->isOpenedModel() ? attention_->stageText() : QString()); });
  connect(selection_, &HeadSelection::headChanged, this, &SpectraTab::followSharedSelection);
  connect(model_, &SpectrumModel::spectrumChanged, this, &SpectraTab::shareSelection);
}

void SpectraTab::showSeries() {
  stale_ = false;
  redrawTimer_->start();
  const bool first = !model_->hasData();
  applying_ = true;  // the model's own fallback to head 0 is not the user's choice
  model_->setSeries(history_->series());
  applying_ = false;
  if (first) {  // take the shared selection
    sharedSelection_ = {-1, -1};
    followSharedSelection();
  }
}

void SpectraTab::waitForResults() {
  history_->job().waitForIdle();
  showSeries();
}

void SpectraTab::followSharedSelection() {
  const std::pair<int, int> shared{selection_->layer(), selection_->head()};
  if (!attention_->hasMap() || shared == sharedSelection_) return;
  sharedSelection_ = shared;
  model_->select(shared.first, shared.second);
}

void SpectraTab::shareSelection() {
  const int layer = model_->selectedLayer(), head = model_->selectedHead();
  if (applying_ || !model_->hasData() || !attention_->hasMap()) return;
  if (head == SpectrumModel::kAllHeads) {  // the overlay keeps the shared head, in the new layer
    if (layer != selection_->layer())
      selection_->select(layer, std::min(selection_->head(), attention_->headCount(layer) - 1));
  } else {
    selection_->select(layer, head);
  }
  sharedSelection_ = {selection_->layer(), selection_->head()};
}

void SpectraTab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) showSeries();
}

QString SpectraTab::exportName() const {
  const int head = model_->selectedHead();
  return QStringLiteral("spectra-L%1-%2-step%3")
      .arg(model_->selectedLayer() + 1)
      .arg(head == SpectrumModel::kAllHeads ? QStringLiteral("all") : QStringLiteral("H%1").arg(head + 1))
      .arg(model_->step());
}

bool SpectraTab::hasExportData() const { return model_->hasData(); }

void SpectraTab::writeCsv(QTextStream& out) const {
  // The shown step's numbers, one row per value; complex values use both columns.
  out << "step,layer,head,quantity,index,value,imaginary\n";
  const int step = model_->step(), layer = model_->selectedLayer() + 1;
  auto row = [&](int head, const char* quantity, int index, double value, const QString& imaginary = QString()) {
    out << step << ',' << layer << ',' << head + 1 << ',' << quantity << ',' << index << ','
        << QString::number(value, 'g', 9) << ',' << imaginary << '\n';
  };
  auto points = [&](int head, const char* quantity, const QList<QPointF>& list, bool complex, int base) {
    for (int i = 0; i < list.size(); ++i)
      complex ? row(head, quantity, i + base, list[i].x(), QString::number(list[i].y(), 'g', 9))
              : row(head, quantity, i + base, list[i].y());
  };
  for (const SpectrumModel::Numbers& n : model_->numbers()) {
    row(n.head, "skew_energy_share", 0, n.skewEnergyShare);
    row(n.head, "non_normality", 0, n.nonNormality);
    points(n.head, "eigenvalue", model_->eigenvaluePoints(n.head), true, 0);
    points(n.head, "singular_value", model_->singularValuePoints(n.head), false, 0);
    points(n.head, "null_draw_eigenvalue", model_->nullDrawPoints(n.head), true, 0);
    points(n.head, "rope_phase", model_->ropePhasePoints(n.head), false, 0);
    points(n.head, "rope_magnitude", model_->ropeMagnitudePoints(n.head), false, 0);
  }
  out << step << ',' << layer << ",," << "null_radius,0," << QString::number(model_->nullRadius(), 'g', 9) << ",\n";
}

void SpectraTab::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
