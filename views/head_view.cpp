#include "head_view.h"

#include <QCheckBox>
#include <QContextMenuEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "head_selection.h"
#include "training_view.h"

namespace attnlab {

namespace {

constexpr int kMargin = 8;
constexpr int kMaxRowHeight = 24;
constexpr int kMaxLabelChars = 12;

bool masked(const HeadTrace& head, int q, int k) {
  return q < head.scores.rows() && k < head.scores.cols() && std::isinf(head.scores(q, k)) && head.scores(q, k) < 0;
}

}  // namespace

std::vector<AttentionLine> attentionLines(const AttentionMapModel& model, int layer, const std::vector<int>& heads,
                                          float threshold, int onlyQuery, int onlyKey, int maxPerQuery) {
  std::vector<AttentionLine> lines;
  for (int h : heads) {
    const HeadTrace* head = model.head(layer, h);
    if (!head) continue;
    for (int q = 0; q < head->weights.rows(); ++q) {
      if (onlyQuery >= 0 && q != onlyQuery) continue;
      const size_t rowStart = lines.size();
      for (int k = 0; k < head->weights.cols(); ++k) {
        if (onlyKey >= 0 && k != onlyKey) continue;
        const float w = head->weights(q, k);
        if (std::isfinite(w) && w >= threshold && !masked(*head, q, k)) lines.push_back({h, q, k, w});
      }
      if (maxPerQuery > 0 && lines.size() - rowStart > size_t(maxPerQuery)) {
        // Keep the strongest keys, back in key order.
        const auto first = lines.begin() + rowStart;
        std::nth_element(first, first + maxPerQuery - 1, lines.end(),
                         [](const AttentionLine& a, const AttentionLine& b) { return a.weight > b.weight; });
        lines.resize(rowStart + maxPerQuery);
        std::sort(lines.begin() + rowStart, lines.end(), [](const AttentionLine& a, const AttentionLine& b) { return a.key < b.key; });
      }
    }
  }
  return lines;
}

// ---- canvas ----------------------------------------------------------------------------------

HeadLinesCanvas::HeadLinesCanvas(const AttentionMapModel* model, const HeadSelection* selection, QWidget* parent)
    : QWidget(parent), model_(model), selection_(selection) {
  connect(model_, &AttentionMapModel::mapChanged, this, qOverload<>(&QWidget::update));
  connect(selection_, &HeadSelection::headChanged, this, qOverload<>(&QWidget::update));
  connect(selection_, &HeadSelection::queryChanged, this, qOverload<>(&QWidget::update));
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HeadLinesCanvas::setHeads(std::vector<int> heads) {
  heads_ = std::move(heads);
  update();
}

HeadLinesCanvas::Geometry HeadLinesCanvas::geometry() const {
  Geometry g;
  const int n = selection_->shown().size();
  g.font = font();
  if (n == 0) return g;
  const QFontMetrics base(g.font);
  g.top = kMargin + 2 * base.height() + kMargin;  // the legend line, then the column titles
  g.rowHeight = std::min(kMaxRowHeight, std::max(1, (height() - g.top - kMargin) / n));
  // Shrink the font until a label fits its row (not below 6 pt: then some labels are skipped).
  while (QFontMetrics(g.font).height() > g.rowHeight + 1 && g.font.pointSizeF() > 6) g.font.setPointSizeF(g.font.pointSizeF() - 0.5);
  const QFontMetrics fm(g.font);
  for (int i = 0; i < n; ++i) g.labelWidth = std::max(g.labelWidth, fm.horizontalAdvance(model_->tokenLabel(i)));
  g.labelWidth = std::min(g.labelWidth, fm.horizontalAdvance(QLatin1Char('M')) * kMaxLabelChars) + 4;
  const int linesWidth = std::max(120, std::min(width() - 2 * (kMargin + g.labelWidth), 420));
  const int block = 2 * g.labelWidth + linesWidth;
  const int left = std::max(kMargin, (width() - block) / 2);
  g.queryRight = left + g.labelWidth;
  g.keyLeft = g.queryRight + linesWidth;
  return g;
}

QPoint HeadLinesCanvas::tokenAnchor(int position, bool key) const {
  const Geometry g = geometry();
  const int y = g.top + position * g.rowHeight + g.rowHeight / 2;
  return key ? QPoint(g.keyLeft + g.labelWidth / 2, y) : QPoint(g.queryRight - g.labelWidth / 2, y);
}

void HeadLinesCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  const int n = selection_->shown().size();
  if (n == 0) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, tr("No attention yet: start training."));
    return;
  }
  const Geometry g = geometry();
  const int layer = selection_->layer();
  const int heads = model_->headCount(layer);

  // Legend: one coloured name per shown head.
  QFontMetrics legendFm(font());
  int x = kMargin;
  painter.setPen(palette().color(QPalette::Text));
  const QString title = tr("Layer %1:").arg(layer + 1);
  painter.drawText(QPoint(x, kMargin + legendFm.ascent()), title);
  x += legendFm.horizontalAdvance(title) + 8;
  for (int h : heads_) {
    painter.fillRect(QRect(x, kMargin + 2, 18, legendFm.height() - 4), seriesColour(h, heads));
    x += 22;
    const QString name = tr("head %1").arg(h + 1);
    painter.drawText(QPoint(x, kMargin + legendFm.ascent()), name);
    x += legendFm.horizontalAdvance(name) + 12;
  }
  painter.setPen(palette().color(QPalette::PlaceholderText));
  painter.drawText(QRect(0, kMargin, width() - kMargin, legendFm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   tr("queries \u2192 keys \u00b7 up to %1 strongest keys per query, weights below %2 not drawn")
                       .arg(kMaxKeysPerQuery)
                       .arg(kThreshold));

  const QRect titles(0, kMargin + legendFm.height(), 0, legendFm.height());
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(g.queryRight - g.labelWidth - 40, titles.top(), g.labelWidth + 40, titles.height()),
                   Qt::AlignRight | Qt::AlignVCenter, tr("queries"));
  painter.drawText(QRect(g.keyLeft, titles.top(), g.labelWidth + 40, titles.height()), Qt::AlignLeft | Qt::AlignVCenter, tr("keys"));

  // Lines first, labels on top. Opacity follows the weight, so strong attention dominates.
  // Lines are batched by head and by weight level (16 levels of opacity and width), so a long
  // probe costs a few dozen drawLines calls, not thousands of pen changes.
  constexpr int kLevels = 16;
  constexpr size_t kSmoothLinesUpTo = 600;  // beyond, antialiasing costs more than a frame
  const std::vector<AttentionLine> lines =
      attentionLines(*model_, layer, heads_, kThreshold, hoverQuery_ >= 0 || hoverKey_ >= 0 ? hoverQuery_ : selection_->query(),
                     hoverKey_, kMaxKeysPerQuery);  // hovering shows a token's lines, else the query chosen in any view
  painter.setRenderHint(QPainter::Antialiasing, lines.size() <= kSmoothLinesUpTo);
  std::vector<QVector<QLineF>> batches(std::max<size_t>(1, heads_.size()) * kLevels);
  for (const AttentionLine& line : lines) {
    const int slot = static_cast<int>(std::find(heads_.begin(), heads_.end(), line.head) - heads_.begin());
    const int level = std::clamp(static_cast<int>(line.weight * kLevels), 0, kLevels - 1);
    const double yq = g.top + line.query * g.rowHeight + g.rowHeight / 2.0;
    const double yk = g.top + line.key * g.rowHeight + g.rowHeight / 2.0;
    batches[slot * kLevels + level].append(QLineF(g.queryRight + 3, yq, g.keyLeft - 3, yk));
  }
  for (size_t slot = 0; slot < heads_.size(); ++slot)
    for (int level = 0; level < kLevels; ++level) {
      const QVector<QLineF>& lines = batches[slot * kLevels + level];
      if (lines.isEmpty()) continue;
      const double weight = (level + 0.5) / kLevels;
      QColor c = seriesColour(heads_[slot], heads);
      c.setAlphaF(std::clamp(0.15 + 0.85 * weight, 0.0, 1.0) * (heads_.size() > 1 ? 0.8 : 1.0));
      // Hairlines are the raster engine's fast path; only strong weights get wider strokes.
      QPen pen(c, weight < 0.5 ? 0.0 : weight < 0.8 ? 2.0 : 3.0);
      pen.setCapStyle(Qt::FlatCap);
      painter.setPen(pen);
      painter.drawLines(lines);
    }

  painter.setFont(g.font);
  const QFontMetrics fm(g.font);
  const int every = std::max(1, static_cast<int>(std::ceil(double(fm.height()) / std::max(1, g.rowHeight))));
  for (int i = 0; i < n; ++i) {
    const bool hovered = i == hoverQuery_ || i == hoverKey_;
    if (i % every != 0 && !hovered) continue;
    const QString label = fm.elidedText(model_->tokenLabel(i), Qt::ElideRight, g.labelWidth - 4);
    const int y = g.top + i * g.rowHeight + g.rowHeight / 2 - fm.height() / 2;
    for (bool key : {false, true}) {
      const QRect r = key ? QRect(g.keyLeft + 4, y, g.labelWidth - 4, fm.height()) : QRect(g.queryRight - g.labelWidth, y, g.labelWidth - 4, fm.height());
      const bool lit = key ? i == hoverKey_ : i == hoverQuery_;
      if (lit) painter.fillRect(r.adjusted(-2, 0, 2, 0), palette().color(QPalette::Highlight));
      painter.setPen(palette().color(lit ? QPalette::HighlightedText : QPalette::Text));
      painter.drawText(r, (key ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter, label);
    }
  }
}

void HeadLinesCanvas::mouseMoveEvent(QMouseEvent* event) {
  const Geometry g = geometry();
  int query = -1, key = -1;
  const QPoint p = event->position().toPoint();
  if (g.rowHeight > 0 && p.y() >= g.top) {
    const int row = (p.y() - g.top) / g.rowHeight;
    if (row < selection_->shown().size()) {
      if (p.x() <= g.queryRight && p.x() >= g.queryRight - g.labelWidth) query = row;
      if (p.x() >= g.keyLeft && p.x() <= g.keyLeft + g.labelWidth) key = row;
    }
  }
  if (query != hoverQuery_ || key != hoverKey_) {
    hoverQuery_ = query;
    hoverKey_ = key;
    update();
  }
}

void HeadLinesCanvas::leaveEvent(QEvent*) {
  hoverQuery_ = hoverKey_ = -1;
  update();
}

// ---- view ------------------------------------------------------------------------------------

HeadView::HeadView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), model_(context.attention), selection_(context.selection), canvas_(new HeadLinesCanvas(context.attention, context.selection, this)), boxRow_(new QHBoxLayout) {
  auto* all = new QPushButton(tr("All heads"), this);
  all->setToolTip(tr("Show every head of this layer, each in its colour"));
  connect(all, &QPushButton::clicked, this, [this] {
    for (QCheckBox* box : boxes_) box->setChecked(true);
  });
  auto* hint = new QLabel(tr("Hover a token to see only its lines."), this);
  hint->setForegroundRole(QPalette::PlaceholderText);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Heads shown:"), this));
  top->addLayout(boxRow_);
  top->addWidget(all);
  top->addStretch(1);
  top->addWidget(hint);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(canvas_, 1);
  connect(model_, &AttentionMapModel::mapChanged, this, &HeadView::syncHeadBoxes);
  connect(selection_, &HeadSelection::headChanged, this, &HeadView::syncHeadBoxes);
  syncHeadBoxes();
}

void HeadView::syncHeadBoxes() {
  const int layer = selection_->layer();
  const int heads = model_->headCount(layer);
  if (static_cast<int>(boxes_.size()) != heads || layer != shownLayer_) {
    // A new layer (or shape): start again from the selected head alone.
    for (QCheckBox* box : boxes_) delete box;
    boxes_.clear();
    for (int h = 0; h < heads; ++h) {
      auto* box = new QCheckBox(QString::number(h + 1), this);
      QPixmap swatch(12, 12);
      swatch.fill(seriesColour(h, heads));
      box->setIcon(QIcon(swatch));
      box->setChecked(h == selection_->head());
      connect(box, &QCheckBox::toggled, this, &HeadView::applyBoxes);
      boxRow_->addWidget(box);
      boxes_.push_back(box);
    }
  } else if (selection_->head() != shownHead_ && selection_->head() < heads) {
    const QSignalBlocker quiet(boxes_[selection_->head()]);
    boxes_[selection_->head()]->setChecked(true);  // a head picked elsewhere joins the view
  }
  shownLayer_ = layer;
  shownHead_ = selection_->head();
  applyBoxes();
}

void HeadView::applyBoxes() {
  std::vector<int> heads;
  for (int h = 0; h < static_cast<int>(boxes_.size()); ++h)
    if (boxes_[h]->isChecked()) heads.push_back(h);
  canvas_->setHeads(heads);
}

QString HeadView::exportName() const { return QStringLiteral("head-view-L%1").arg(selection_->layer() + 1); }

bool HeadView::hasExportData() const { return model_->hasMap(); }

void HeadView::writeCsv(QTextStream& out) const {
  out << "layer,head,query,key,query_token,key_token,weight\n";
  const int layer = selection_->layer();
  for (const AttentionLine& line : attentionLines(*model_, layer, canvas_->heads(), HeadLinesCanvas::kThreshold, -1, -1,
                                                 HeadLinesCanvas::kMaxKeysPerQuery))
    out << layer + 1 << ',' << line.head + 1 << ',' << line.query << ',' << line.key << ','
        << csvField(model_->tokenLabel(line.query)) << ',' << csvField(model_->tokenLabel(line.key)) << ','
        << QString::number(line.weight, 'g', 7) << '\n';
}

void HeadView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
