#include "composition_graph.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "unit_labels.h"

namespace attnlab {
namespace {

constexpr double kMargin = 28, kLabel = 22;

QColor kindColour(CompositionKind kind) {
  switch (kind) {
    case CompositionKind::q: return QColor(40, 110, 200);
    case CompositionKind::k: return QColor(210, 90, 20);
    default: return QColor(30, 150, 80);
  }
}

const char* kindName(CompositionKind kind) { return kind == CompositionKind::q ? "Q" : kind == CompositionKind::k ? "K" : "V"; }

double distanceToSegment(QPointF p, QPointF a, QPointF b) {
  const QPointF ab = b - a;
  const double length2 = QPointF::dotProduct(ab, ab);
  const double t = length2 > 0 ? std::clamp(QPointF::dotProduct(p - a, ab) / length2, 0.0, 1.0) : 0.0;
  const QPointF d = p - (a + t * ab);
  return std::hypot(d.x(), d.y());
}

}  // namespace

CompositionGraph::CompositionGraph(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(260, 160);
}

double CompositionGraph::scoreOf(const CompositionScore& s, CompositionKind kind) {
  return kind == CompositionKind::q ? s.q : kind == CompositionKind::k ? s.k : s.v;
}

void CompositionGraph::setComposition(std::shared_ptr<const HeadComposition> composition, int layers, int heads) {
  composition_ = std::move(composition);
  layers_ = layers;
  heads_ = heads;
  update();
}

void CompositionGraph::setKind(CompositionKind kind) {
  kind_ = kind;
  update();
}

void CompositionGraph::setThreshold(double threshold) {
  threshold_ = threshold;
  update();
}

void CompositionGraph::setSelected(int layer, int head) {
  selectedLayer_ = layer;
  selectedHead_ = head;
  update();
}

std::vector<const CompositionScore*> CompositionGraph::shownEdges() const {
  std::vector<const CompositionScore*> out;
  if (!composition_) return out;
  for (const CompositionScore& s : composition_->pairs)
    if (scoreOf(s, kind_) >= threshold_) out.push_back(&s);
  return out;
}

double CompositionGraph::thresholdForShare(double share) const {
  if (!composition_ || composition_->pairs.empty()) return 0;
  std::vector<double> scores;
  for (const CompositionScore& s : composition_->pairs) scores.push_back(scoreOf(s, kind_));
  std::sort(scores.begin(), scores.end(), std::greater<>());
  const size_t keep = std::clamp<size_t>(static_cast<size_t>(std::ceil(share * scores.size())), 1, scores.size());
  return scores[keep - 1];
}

// Nodes fill the area above the layer labels (16 px) and the caption (kLabel).
double CompositionGraph::nodeAreaHeight() const { return std::max(1.0, height() - 2 * kMargin - kLabel - 16); }

QPointF CompositionGraph::nodeCentre(int layer, int head) const {
  const double w = width() - 2 * kMargin, h = nodeAreaHeight();
  const double x = kMargin + (layers_ > 1 ? w * layer / (layers_ - 1) : w / 2);
  const double y = kMargin + (heads_ > 1 ? h * head / (heads_ - 1) : h / 2);
  return {x, y};
}

double CompositionGraph::nodeRadius() const {
  return std::clamp(nodeAreaHeight() / std::max(1, heads_) / 3, 2.5, 9.0);
}

bool CompositionGraph::nodeAt(QPointF p, int& layer, int& head) const {
  const double r = nodeRadius() + 2;
  for (int l = 0; l < layers_; ++l)
    for (int h = 0; h < heads_; ++h) {
      const QPointF d = p - nodeCentre(l, h);
      if (d.x() * d.x() + d.y() * d.y() <= r * r) {
        layer = l;
        head = h;
        return true;
      }
    }
  return false;
}

const CompositionScore* CompositionGraph::edgeAt(QPointF p) const {
  const CompositionScore* best = nullptr;
  double nearest = 4;
  for (const CompositionScore* s : shownEdges()) {
    const double d = distanceToSegment(p, nodeCentre(s->from_layer, s->from_head), nodeCentre(s->to_layer, s->to_head));
    if (d < nearest) {
      nearest = d;
      best = s;
    }
  }
  return best;
}

QString CompositionGraph::nodeText(int layer, int head) const {
  QString text = tr("%1: OV copying score %2").arg(headName(layer, head)).arg(composition_->copying[layer][head], 0, 'f', 3);
  std::vector<const CompositionScore*> inputs;
  for (const CompositionScore& s : composition_->pairs)
    if (s.to_layer == layer && s.to_head == head) inputs.push_back(&s);
  std::sort(inputs.begin(), inputs.end(), [this](auto* a, auto* b) { return scoreOf(*a, kind_) > scoreOf(*b, kind_); });
  for (size_t i = 0; i < std::min<size_t>(3, inputs.size()); ++i)
    text += tr("\n%1-composition from %2: %3").arg(kindName(kind_), headName(inputs[i]->from_layer, inputs[i]->from_head))
                .arg(scoreOf(*inputs[i], kind_), 0, 'f', 3);
  return text;
}

void CompositionGraph::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.fillRect(rect(), palette().base());
  if (!composition_ || layers_ == 0 || heads_ == 0) {
    painter.drawText(rect(), Qt::AlignCenter, tr("Head composition: computed from the weights with each run."));
    return;
  }
  // Edges, weakest first so the strongest are on top.
  std::vector<const CompositionScore*> edges = shownEdges();
  std::sort(edges.begin(), edges.end(), [this](auto* a, auto* b) { return scoreOf(*a, kind_) < scoreOf(*b, kind_); });
  double top = threshold_;
  for (const CompositionScore* s : edges) top = std::max(top, scoreOf(*s, kind_));
  const QColor base = kindColour(kind_);
  for (const CompositionScore* s : edges) {
    const double strength = top > threshold_ ? (scoreOf(*s, kind_) - threshold_) / (top - threshold_) : 1.0;
    QColor colour = base;
    colour.setAlphaF(0.25 + 0.75 * strength);
    painter.setPen(QPen(colour, 0.8 + 3.2 * strength));
    painter.drawLine(nodeCentre(s->from_layer, s->from_head), nodeCentre(s->to_layer, s->to_head));
  }
  const double r = nodeRadius();
  for (int l = 0; l < layers_; ++l)
    for (int h = 0; h < heads_; ++h) {
      const bool selected = l == selectedLayer_ && h == selectedHead_;
      painter.setPen(QPen(selected ? QColor(200, 0, 0) : palette().text().color(), selected ? 2.5 : 1));
      painter.setBrush(palette().window());
      painter.drawEllipse(nodeCentre(l, h), selected ? r + 2 : r, selected ? r + 2 : r);
    }
  painter.setPen(palette().text().color());
  const int headStep = std::max(1, static_cast<int>(std::ceil(14 / std::max(1.0, 3 * r))));
  for (int h = 0; h < heads_; h += headStep)
    painter.drawText(QRectF(0, nodeCentre(0, h).y() - 8, kMargin - r - 2, 16), Qt::AlignRight | Qt::AlignVCenter, headLabel(h));
  const int layerStep = std::max(1, static_cast<int>(std::ceil(40 / std::max(1.0, (width() - 2 * kMargin) / std::max(1, layers_ - 1)))));
  for (int l = 0; l < layers_; l += layerStep)
    painter.drawText(QRectF(nodeCentre(l, 0).x() - 30, height() - kLabel - 16, 60, 16), Qt::AlignCenter, layerLabel(l));
  painter.drawText(QRectF(kMargin, height() - kLabel, width() - 2 * kMargin, kLabel), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1-composition >= %2: %3 of %4 pairs").arg(kindName(kind_)).arg(threshold_, 0, 'f', 3).arg(edges.size())
                       .arg(composition_->pairs.size()));
}

void CompositionGraph::mouseMoveEvent(QMouseEvent* event) {
  if (!composition_) return;
  int layer, head;
  if (nodeAt(event->position(), layer, head)) {
    QToolTip::showText(event->globalPosition().toPoint(), nodeText(layer, head), this);
  } else if (const CompositionScore* s = edgeAt(event->position())) {
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("%1 -> %2\nQ %3, K %4, V %5").arg(headName(s->from_layer, s->from_head), headName(s->to_layer, s->to_head))
                           .arg(s->q, 0, 'f', 3).arg(s->k, 0, 'f', 3).arg(s->v, 0, 'f', 3),
                       this);
  } else {
    QToolTip::hideText();
  }
}

void CompositionGraph::mousePressEvent(QMouseEvent* event) {
  int layer, head;
  if (composition_ && nodeAt(event->position(), layer, head)) emit headClicked(layer, head);
}

}  // namespace attnlab
