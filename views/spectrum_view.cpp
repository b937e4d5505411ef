#include "spectrum_view.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QResizeEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>
#include <cmath>

#include "palette.h"
#include "spectrum_model.h"

namespace attnlab {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kCirclePoints = 160;

QChartView* makeChartView(const QString& title, const QString& xTitle, const QString& yTitle, QWidget* parent) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(2, 2, 2, 2));
  auto* x = new QValueAxis;
  auto* y = new QValueAxis;
  x->setTitleText(xTitle);
  y->setTitleText(yTitle);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(260, 220);
  return view;
}

QValueAxis* axis(QChart* chart, Qt::Orientation orientation) {
  return static_cast<QValueAxis*>(chart->axes(orientation).constFirst());
}

void attach(QChart* chart, QAbstractSeries* series) {
  chart->addSeries(series);
  series->attachAxis(axis(chart, Qt::Horizontal));
  series->attachAxis(axis(chart, Qt::Vertical));
}

// A range from 0 that ends on a round number, with round ticks.
void setRoundRange(QValueAxis* axis, double top) {
  axis->setRange(0, std::max(1e-9, top));
  axis->applyNiceNumbers();
}

// The smallest of 1, 2, 5 x 10^k that is at least `raw`.
double roundStep(double raw) {
  if (!(raw > 0)) return 1;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw * (1 - 1e-9)) return m * decade;
  return 10 * decade;
}

// Ticks on whole numbers from `first` to `last` (at most about 8 of them), half a unit of margin.
void setIntegerTicks(QValueAxis* axis, int first, int last) {
  axis->setRange(first - 0.5, last + 0.5);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(first);
  axis->setTickInterval(std::max(1, (last - first + 7) / 8));
  axis->setLabelFormat(QStringLiteral("%d"));
}

QString headName(int head) { return QObject::tr("head %1").arg(head + 1); }

QScatterSeries* scatter(const QList<QPointF>& points, const QString& name, const QColor& color, double size) {
  auto* series = new QScatterSeries;
  series->setName(name);
  series->replace(points);
  series->setColor(color);
  series->setBorderColor(color.darker(140));
  series->setMarkerSize(size);
  return series;
}

QString number(double value) { return std::isfinite(value) ? QString::number(value, 'f', 3) : QStringLiteral("-"); }

}  // namespace

SpectrumView::SpectrumView(SpectrumModel* model, QWidget* parent)
    : QWidget(parent),
      model_(model),
      layerLabel_(new QLabel(tr("Layer"), this)),
      layerPicker_(new QComboBox(this)),
      headLabel_(new QLabel(tr("Head"), this)),
      headPicker_(new QComboBox(this)),
      overlay_(new QCheckBox(tr("All heads of the layer"), this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      play_(new QPushButton(tr("Play"), this)),
      fit_(new QCheckBox(tr("Fit axes"), this)),
      logRadius_(new QCheckBox(tr("Log radius"), this)),
      stepLabel_(new QLabel(this)),
      numbers_(new QLabel(this)),
      plane_(makeChartView(tr("Eigenvalues of W_q^T W_k"), tr("real"), tr("imaginary"), this)),
      singular_(makeChartView(tr("Singular values"), tr("rank"), tr("\u03c3"), this)),
      rope_(makeChartView(tr("RoPE pairs: z = rotation-commuting part of each 2×2 block"),
                          tr("pair (0 = fastest rotation)"), QString(), this)),
      magnitudeAxis_(new QValueAxis),
      timer_(new QTimer(this)) {
  magnitudeAxis_->setTitleText(tr("|z| (line)"));
  rope_->chart()->addAxis(magnitudeAxis_, Qt::AlignRight);
  axis(rope_->chart(), Qt::Vertical)->setTitleText(tr("phase arg z, rad (dots)"));
  auto* controls = new QHBoxLayout;
  controls->addWidget(layerLabel_);
  controls->addWidget(layerPicker_);
  controls->addSpacing(8);
  controls->addWidget(headLabel_);
  controls->addWidget(headPicker_);
  controls->addWidget(overlay_);
  overlay_->hide();
  controls->addSpacing(12);
  controls->addWidget(play_);
  slider_->setMinimumWidth(70);  // still a slider in a narrow comparison pane
  controls->addWidget(slider_, 1);
  controls->addWidget(stepLabel_);
  controls->addSpacing(8);
  controls->addWidget(fit_);
  controls->addWidget(logRadius_);

  numbers_->setTextFormat(Qt::RichText);
  numbers_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  numbers_->setAlignment(Qt::AlignTop | Qt::AlignLeft);

  auto* charts = new QGridLayout;
  charts_ = charts;
  charts->addWidget(plane_, 0, 0, 2, 1);
  charts->addWidget(singular_, 0, 1);
  charts->addWidget(rope_, 1, 1);
  charts->addWidget(numbers_, 0, 2, 2, 1);
  charts->setColumnStretch(0, 5);
  charts->setColumnStretch(1, 4);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addLayout(charts, 1);

  layerPicker_->setToolTip(tr("Transformer block whose heads are shown"));
  headPicker_->setToolTip(tr("One head, or every head of the layer overlaid"));
  slider_->setToolTip(tr("Training snapshot"));
  play_->setToolTip(tr("Play the spectrum through the training snapshots"));
  fit_->setToolTip(tr("Off: the axes hold every step, so the motion shows. On: they fit this step, "
                     "to compare an early spectrum with the random null."));
  logRadius_->setObjectName(QStringLiteral("logRadius"));
  logRadius_->setToolTip(tr("Draw each eigenvalue at its angle and radius log\u2082(1 + |\u03bb| / r\u2080), r\u2080 the null "
                            "radius: the null disk's edge is 1, and a trained spectrum far outside it stays in view with the "
                            "disk. On by itself when the trained spectrum would shrink the disk to a dot."));
  timer_->setInterval(400);

  connect(layerPicker_, &QComboBox::currentIndexChanged, this, [this](int layer) {
    const int head = model_->selectedHead();
    model_->select(layer, head < model_->headCount(layer) ? head : 0);
  });
  connect(headPicker_, &QComboBox::currentIndexChanged, this,
          [this](int index) { model_->select(model_->selectedLayer(), index - 1); });  // item 0 is "all"
  overlay_->setToolTip(tr("Overlay the spectra of every head of the selected layer, one colour per head"));
  connect(overlay_, &QCheckBox::toggled, this, [this](bool all) {
    model_->select(model_->selectedLayer(), all ? SpectrumModel::kAllHeads : singleHead_);
  });
  connect(slider_, &QSlider::valueChanged, model_, &SpectrumModel::setSnapshot);
  connect(fit_, &QCheckBox::toggled, model_, &SpectrumModel::setFitToSnapshot);
  connect(logRadius_, &QCheckBox::toggled, this, [this](bool log) {
    model_->setPlaneScale(log ? SpectrumModel::PlaneScale::Log : SpectrumModel::PlaneScale::Linear);
  });
  connect(play_, &QPushButton::clicked, this, [this] { setPlaying(!playing()); });
  connect(timer_, &QTimer::timeout, this, [this] {
    if (model_->snapshotIndex() + 1 >= model_->snapshotCount()) {
      setPlaying(false);
      return;
    }
    model_->setSnapshot(model_->snapshotIndex() + 1);
  });
  connect(plane_->chart(), &QChart::plotAreaChanged, this, &SpectrumView::fitPlaneAspect);
  connect(model_, &SpectrumModel::shapeChanged, this, &SpectrumView::syncControls);
  connect(model_, &SpectrumModel::spectrumChanged, this, [this] {
    syncControls();
    redraw();
  });
  syncControls();
  redraw();
}

QChart* SpectrumView::planeChart() const { return plane_->chart(); }
QChart* SpectrumView::singularChart() const { return singular_->chart(); }
QChart* SpectrumView::ropeChart() const { return rope_->chart(); }

bool SpectrumView::playing() const { return timer_->isActive(); }

void SpectrumView::setPlaying(bool play) {
  if (play && model_->snapshotCount() < 2) play = false;
  if (play && model_->snapshotIndex() + 1 >= model_->snapshotCount()) model_->setSnapshot(0);
  if (play)
    timer_->start();
  else
    timer_->stop();
  play_->setText(play ? tr("Pause") : tr("Play"));
}

void SpectrumView::setPlayInterval(int milliseconds) { timer_->setInterval(milliseconds); }

void SpectrumView::setSharedSelection(bool shared) {
  for (QWidget* w : {static_cast<QWidget*>(layerLabel_), static_cast<QWidget*>(layerPicker_), static_cast<QWidget*>(headLabel_),
                     static_cast<QWidget*>(headPicker_)})
    w->setVisible(!shared);
  overlay_->setVisible(shared);
}

void SpectrumView::setModelName(const QString& name) {
  if (name == modelName_) return;
  modelName_ = name;
  syncControls();
}

void SpectrumView::syncControls() {
  const QSignalBlocker quietLayer(layerPicker_), quietHead(headPicker_), quietSlider(slider_), quietFit(fit_),
      quietOverlay(overlay_), quietLog(logRadius_);
  fit_->setChecked(model_->fitToSnapshot());
  logRadius_->setChecked(model_->logRadius());
  logRadius_->setEnabled(model_->nullRadius() > 0);
  if (model_->selectedHead() != SpectrumModel::kAllHeads) singleHead_ = model_->selectedHead();
  overlay_->setChecked(model_->selectedHead() == SpectrumModel::kAllHeads);
  overlay_->setEnabled(model_->hasData());
  if (layerPicker_->count() != model_->layerCount()) {
    layerPicker_->clear();
    for (int i = 0; i < model_->layerCount(); ++i) layerPicker_->addItem(QString::number(i + 1));
  }
  layerPicker_->setCurrentIndex(model_->layerCount() > 0 ? model_->selectedLayer() : -1);
  const int heads = model_->headCount(model_->selectedLayer());
  if (headPicker_->count() != heads + 1) {
    headPicker_->clear();
    headPicker_->addItem(tr("all"));
    for (int i = 0; i < heads; ++i) headPicker_->addItem(QString::number(i + 1));
  }
  headPicker_->setCurrentIndex(model_->selectedHead() + 1);
  slider_->setRange(0, std::max(0, model_->snapshotCount() - 1));
  slider_->setValue(model_->snapshotIndex());
  for (QWidget* w : {static_cast<QWidget*>(layerPicker_), static_cast<QWidget*>(headPicker_)}) w->setEnabled(model_->hasData());
  slider_->setEnabled(model_->snapshotCount() > 1);
  play_->setEnabled(model_->snapshotCount() > 1);
  if (!modelName_.isEmpty()) stepLabel_->setText(model_->hasData() ? modelName_ : tr("no snapshots"));
  else stepLabel_->setText(model_->hasData() ? tr("step %1 (%2 of %3)")
                                              .arg(model_->step())
                                              .arg(model_->snapshotIndex() + 1)
                                              .arg(model_->snapshotCount())
                                        : tr("no snapshots"));
}

void SpectrumView::redraw() {
  redrawPlane();
  redrawSingular();
  redrawRope();
  updateNumbers();
}

void SpectrumView::redrawPlane() {
  QChart* chart = plane_->chart();
  chart->removeAllSeries();
  fitPlaneAspect();
  const bool log = model_->logRadius();
  axis(chart, Qt::Horizontal)->setTitleText(log ? tr("real, log radius (1 = null radius)") : tr("real"));
  axis(chart, Qt::Vertical)->setTitleText(log ? tr("imaginary, log radius") : tr("imaginary"));
  if (!model_->hasData()) return;

  const double radius = model_->drawnNullRadius();
  if (radius > 0) {
    auto* null = new QLineSeries;
    QPen pen(QColor(120, 120, 120));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    null->setPen(pen);
    if (model_->nullSymmetric()) {  // W W^T is symmetric: its null spreads on the real line
      null->setName(tr("random null (real interval)"));
      null->append(-radius, 0);
      null->append(radius, 0);
    } else {
      null->setName(tr("Ginibre null disk"));
      for (int i = 0; i <= kCirclePoints; ++i) {
        const double angle = 2 * kPi * i / kCirclePoints;
        null->append(radius * std::cos(angle), radius * std::sin(angle));
      }
    }
    attach(chart, null);
  }
  const std::vector<int> heads = model_->shownHeads();
  QList<QPointF> draw;
  for (int head : heads) draw += model_->nullDrawPoints(head);
  if (!draw.isEmpty()) attach(chart, scatter(draw, tr("random init draw"), QColor(190, 190, 190), 6));
  for (int head : heads) attach(chart, scatter(model_->eigenvaluePoints(head), headName(head), categoryColor(head), 9));
}

void SpectrumView::fitPlaneAspect() {
  // A new range gives new tick labels, whose widths move the plot area, which asks for a new
  // range: refit from inside a few times at most, never recursively (labels can alternate).
  if (fittingPlane_) {
    planeMoved_ = true;
    return;
  }
  fittingPlane_ = true;
  for (int pass = 0; pass < 3; ++pass) {
    planeMoved_ = false;
    // One unit is as long across as up, so the null disk is round: the longer side of the plot
    // area gets the wider range.
    const QRectF area = plane_->chart()->plotArea();
    const double extent = model_->planeExtent();
    const double wide = area.height() > 0 ? extent * std::max(1.0, area.width() / area.height()) : extent;
    const double tall = area.width() > 0 ? extent * std::max(1.0, area.height() / area.width()) : extent;
    QValueAxis* x = axis(plane_->chart(), Qt::Horizontal);
    QValueAxis* y = axis(plane_->chart(), Qt::Vertical);
    if (std::abs(x->max() - wide) > 1e-12 * wide || std::abs(y->max() - tall) > 1e-12 * tall) {
      for (auto [axis, half] : {std::pair{x, wide}, std::pair{y, tall}}) {
        axis->setRange(-half, half);
        // Round ticks through 0 (the range itself is whatever keeps the units square).
        axis->setTickType(QValueAxis::TicksDynamic);
        axis->setTickAnchor(0);
        axis->setTickInterval(roundStep(half / 2));
        axis->setLabelFormat(QStringLiteral("%.3g"));
      }
    }
    if (!planeMoved_) break;
  }
  fittingPlane_ = false;
}

void SpectrumView::redrawSingular() {
  QChart* chart = singular_->chart();
  chart->removeAllSeries();
  setIntegerTicks(axis(chart, Qt::Horizontal), 1, std::max(1, model_->maxRank()));
  setRoundRange(axis(chart, Qt::Vertical), model_->maxSingularValue());
  for (int head : model_->shownHeads()) {
    auto* series = new QLineSeries;
    series->setName(headName(head));
    series->replace(model_->singularValuePoints(head));
    series->setColor(categoryColor(head));
    series->setPointsVisible(true);
    attach(chart, series);
  }
}

void SpectrumView::redrawRope() {
  rope_->setVisible(model_->usesRope());
  QChart* chart = rope_->chart();
  chart->removeAllSeries();
  axis(chart, Qt::Vertical)->setRange(-kPi, kPi);
  setRoundRange(magnitudeAxis_, model_->maxRopeMagnitude());
  int pairs = 1;
  for (int head : model_->shownHeads()) {
    const QList<QPointF> phases = model_->ropePhasePoints(head);
    if (phases.isEmpty()) continue;
    pairs = std::max(pairs, int(phases.size()));
    attach(chart, scatter(phases, headName(head), categoryColor(head), 8));
    auto* magnitude = new QLineSeries;
    magnitude->replace(model_->ropeMagnitudePoints(head));
    magnitude->setColor(categoryColor(head));
    chart->addSeries(magnitude);
    magnitude->attachAxis(axis(chart, Qt::Horizontal));
    magnitude->attachAxis(magnitudeAxis_);
    chart->legend()->markers(magnitude).constFirst()->setVisible(false);  // the dots' entry names the head
  }
  setIntegerTicks(axis(chart, Qt::Horizontal), 0, pairs - 1);
}

void SpectrumView::updateNumbers() {
  if (!model_->hasData()) {
    numbers_->setText(tr("No spectra yet"));
    return;
  }
  // Largest |eigenvalue| over the null radius: how far training has moved the head past chance.
  const double null = model_->nullRadius() > 0 && !model_->nullSymmetric() ? model_->nullRadius() : 0;
  QString html = tr("<table cellspacing=0 cellpadding=3><tr><th></th><th align=right>skew<br>share</th>"
                    "<th align=right>non-<br>normality</th><th align=right>|\u03bb|max<br>/ null</th></tr>");
  for (const SpectrumModel::Numbers& n : model_->numbers()) {
    const double radius = model_->spectralRadius(n.head);  // as computed, whatever the plane's scale
    html += QStringLiteral("<tr><td><span style='color:%1'>\u25a0</span> %2</td><td align=right>%3</td><td align=right>%4</td>"
                           "<td align=right>%5</td></tr>")
                .arg(categoryColor(n.head).name(), headName(n.head), number(n.skewEnergyShare), number(n.nonNormality),
                     null > 0 ? QString::number(radius / null, 'f', 1) : QStringLiteral("-"));
  }
  html += tr("</table><p>skew share: ||A||\u00b2/||M||\u00b2 for<br>M = S + A (S symmetric, A skew);<br>"
             "0 = pure matching, 1 = pure rotation.</p><p>non-normality: Henrici departure<br>"
             "\u221a(||M||\u00b2 \u2212 \u03a3|\u03bb|\u00b2) / ||M||; 0 = normal.</p>");
  if (model_->nullRadius() > 0)
    html += tr("<p>null radius %1: eigenvalues of a<br>random head at the initial scale<br>lie within it (dashed circle).</p>")
                .arg(number(model_->nullRadius()));
  numbers_->setText(html);
}

// In a narrow place (a comparison pane) the numbers go under the charts instead of beside them.
void SpectrumView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  constexpr int kNarrow = 900;
  const bool below = width() < kNarrow;
  int row = 0, column = 0, rows = 0, columns = 0;
  charts_->getItemPosition(charts_->indexOf(numbers_), &row, &column, &rows, &columns);
  if (below == (row == 2)) return;
  charts_->removeWidget(numbers_);
  if (below) charts_->addWidget(numbers_, 2, 0, 1, 2);
  else charts_->addWidget(numbers_, 0, 2, 2, 1);
}

}  // namespace attnlab
