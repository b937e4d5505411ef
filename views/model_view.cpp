#include "model_view.h"

#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QHelpEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QTextStream>
#include <QToolTip>
#include <algorithm>

#include "attention_map_model.h"
#include "background_job.h"
#include "head_selection.h"
#include "map_image.h"

namespace attnlab {

namespace {

constexpr int kMargin = 8;
constexpr int kGap = 8;
constexpr int kSelectionFrame = 3;

}  // namespace

ModelView::ModelView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), model_(context.attention), selection_(context.selection), thumbnailJob_(new BackgroundJob(this)) {
  connect(model_, &AttentionMapModel::mapChanged, this, [this] {
    thumbnailTrace_ = nullptr;  // a new trace or colour scale: thumbnails are remade
    update();
  });
  connect(selection_, &HeadSelection::headChanged, this, qOverload<>(&QWidget::update));
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

ModelView::Geometry ModelView::geometry() const {
  Geometry g;
  const int layers = model_->layerCount();
  for (int l = 0; l < layers; ++l) g.heads = std::max(g.heads, model_->headCount(l));
  if (layers == 0 || g.heads == 0) return g;
  const QFontMetrics fm(font());
  // the corner above the layer labels shows the stage, so the column fits a five-digit step too
  const int left = kMargin + std::max(fm.horizontalAdvance(tr("Layer 00")), fm.horizontalAdvance(tr("step 00000"))) + kGap;
  const int top = kMargin + fm.height() + kGap / 2;
  const int across = (width() - left - kMargin) / g.heads;
  const int down = (height() - top - kMargin) / layers;
  g.pitch = std::max(8, std::min(across, down));
  g.side = g.pitch - kGap;
  // Centre the grid horizontally.
  const int spare = std::max(0, width() - left - kMargin - g.pitch * g.heads);
  g.origin = QPoint(left + spare / 2, top);
  return g;
}

QRect ModelView::thumbnailRect(int layer, int head) const {
  const Geometry g = geometry();
  if (g.side <= 0 || head < 0 || head >= model_->headCount(layer)) return {};
  return QRect(g.origin.x() + head * g.pitch, g.origin.y() + layer * g.pitch, g.side, g.side);
}

std::pair<int, int> ModelView::headAt(const QPoint& point) const {
  for (int l = 0; l < model_->layerCount(); ++l)
    for (int h = 0; h < model_->headCount(l); ++h)
      if (thumbnailRect(l, h).adjusted(-kGap / 2, -kGap / 2, kGap / 2, kGap / 2).contains(point)) return {l, h};
  return {-1, -1};
}

void ModelView::settle() {
  if (isVisible()) repaint();  // asks for the thumbnails this size needs
  thumbnailJob_->waitForIdle();
  QCoreApplication::processEvents();
}

QImage ModelView::thumbnail(int layer, int head, int side) {
  const TraceSnapshot* shown = model_->snapshot();
  const int n = shown ? model_->headMap(layer, head).size() : 0;
  if (n <= kDirectCells) return mapImage(*model_, layer, head);  // small: drawn directly, as always
  // A long probe's maps: thumbnails made on a worker once per trace, colour scale and size.
  if (side != thumbnailSide_ || shown != thumbnailTrace_) requestThumbnails(side);
  const auto found = thumbnails_.find({layer, head});
  return found == thumbnails_.end() ? QImage() : found->second;
}

void ModelView::requestThumbnails(int side) {
  thumbnailSide_ = side;
  thumbnailTrace_ = model_->snapshot();
  std::shared_ptr<const TraceSnapshot> trace = model_->sharedSnapshot();
  const AttentionMapModel::ColourScale scale = model_->colourScale();
  thumbnailJob_->submit([this, trace, scale, side]() -> BackgroundJob::Delivery {
    AttentionMapModel copy;  // this thread's own view of the immutable trace
    copy.setTrace(trace);
    copy.setColourScale(scale);
    auto made = std::make_shared<std::map<std::pair<int, int>, QImage>>();
    for (int l = 0; l < copy.layerCount(); ++l)
      for (int h = 0; h < copy.headCount(l); ++h) (*made)[{l, h}] = mapThumbnail(copy, l, h, side);
    return [this, trace, made, side] {
      if (trace.get() != model_->snapshot() || side != thumbnailSide_) return;
      thumbnails_ = std::move(*made);
      update();
    };
  });
}

void ModelView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  const Geometry g = geometry();
  if (g.side <= 0) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, tr("No attention maps yet: start training."));
    return;
  }
  const QFontMetrics fm(font());
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(kMargin, kMargin, g.origin.x() - kMargin - kGap, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   QFontMetrics(font()).elidedText(model_->stageText(), Qt::ElideMiddle, g.origin.x() - 2 * kMargin - kGap));
  for (int h = 0; h < g.heads; ++h)
    painter.drawText(QRect(g.origin.x() + h * g.pitch, kMargin, g.side, fm.height()), Qt::AlignCenter, tr("Head %1").arg(h + 1));
  for (int l = 0; l < model_->layerCount(); ++l) {
    const QRect row(kMargin, g.origin.y() + l * g.pitch, g.origin.x() - kMargin - kGap, g.side);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(row, Qt::AlignRight | Qt::AlignVCenter, tr("Layer %1").arg(l + 1));
    for (int h = 0; h < model_->headCount(l); ++h) {
      const QRect r = thumbnailRect(l, h);
      QImage image = thumbnail(l, h, r.width());
      if (image.isNull() && painter.paintEngine()->type() == QPaintEngine::SVG)
        image = mapThumbnail(*model_, l, h, r.width());  // an export cannot wait for the worker

      if (image.isNull()) painter.fillRect(r, palette().window());  // being made
      else drawCells(painter, r, image);  // unsmoothed: every cell (or block) stays one colour
      if (model_->isSwitchedOff(l, h)) {  // switched off in the head table: its map stays, its output is gone
        painter.fillRect(r, QColor(255, 255, 255, 170));
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(r, Qt::AlignCenter, tr("off"));
      }
      painter.setPen(palette().color(QPalette::Mid));
      painter.drawRect(r.adjusted(0, 0, -1, -1));
    }
  }
  const QRect selected = thumbnailRect(selection_->layer(), selection_->head());
  if (!selected.isEmpty()) {
    QPen pen(palette().color(QPalette::Highlight), kSelectionFrame);
    pen.setJoinStyle(Qt::MiterJoin);
    painter.setPen(pen);
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(selected.adjusted(-kSelectionFrame + 1, -kSelectionFrame + 1, kSelectionFrame - 2, kSelectionFrame - 2));
  }
}

void ModelView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  const auto [layer, head] = headAt(event->position().toPoint());
  if (layer >= 0) selection_->select(layer, head);
}

bool ModelView::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const auto [layer, head] = headAt(help->pos());
  if (layer < 0) {
    QToolTip::hideText();
    event->ignore();
    return true;
  }
  QToolTip::showText(help->globalPos(),
                     tr("Layer %1, head %2 (%3)\nlargest weight %4\nClick to show it in the other views")
                         .arg(layer + 1)
                         .arg(head + 1)
                         .arg(QString::fromStdString(model_->snapshot()->trace.layers[layer].variant))
                         .arg(model_->maxWeight(layer, head), 0, 'g', 3),
                     this, thumbnailRect(layer, head));
  return true;
}

bool ModelView::hasExportData() const { return model_->hasMap(); }

void ModelView::writeCsv(QTextStream& out) const {
  out << "layer,head,query,key,query_token,key_token,weight,masked\n";
  for (int l = 0; l < model_->layerCount(); ++l)
    for (int h = 0; h < model_->headCount(l); ++h) {
      const HeadTrace& head = *model_->head(l, h);
      for (int q = 0; q < head.weights.rows(); ++q)
        for (int k = 0; k < head.weights.cols(); ++k) {
          const bool masked = q < head.scores.rows() && k < head.scores.cols() && std::isinf(head.scores(q, k));
          out << l + 1 << ',' << h + 1 << ',' << q << ',' << k << ',' << csvField(model_->tokenLabel(q)) << ','
              << csvField(model_->tokenLabel(k)) << ',' << QString::number(head.weights(q, k), 'g', 7) << ','
              << (masked ? 1 : 0) << '\n';
        }
    }
}

void ModelView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
