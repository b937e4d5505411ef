#include "kv_occupancy_raster.h"

#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <cmath>

#include "kv_cache_model.h"
#include "map_image.h"
#include "palette.h"

namespace attnlab {

namespace {
constexpr int kTop = 34;        // room for the title and the step ticks
constexpr int kMargin = 8;
constexpr int kSwatch = 12;
constexpr int kMaxLabelWidth = 110;
}  // namespace

KvOccupancyRaster::KvOccupancyRaster(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setAutoFillBackground(true);
  QPalette p = palette();
  p.setColor(QPalette::Window, Qt::white);
  setPalette(p);
}

void KvOccupancyRaster::show(std::shared_ptr<const KvCacheResult> result, int run, int layer, int kvHead) {
  result_ = std::move(result);
  run_ = run;
  layer_ = layer;
  kvHead_ = kvHead;
  update();
}

void KvOccupancyRaster::setEmptyText(const QString& text) {
  emptyText_ = text;
  update();
}

QColor KvOccupancyRaster::stateColour(CellState state) {
  switch (state) {
    case CellState::NotYet: return QColor(0xf3, 0xf3, 0xf3);
    case CellState::Live: return QColor(0x2f, 0x6f, 0xc4);
    case CellState::Sink: return QColor(0x7b, 0x3f, 0xa8);
    case CellState::KeptRecent: return QColor(0x5f, 0xa8, 0xe0);
    case CellState::KeptByGate: return QColor(0x1f, 0x9a, 0x5a);
    case CellState::EvictedNow: return ruleColour(0);
    case CellState::EvictedEarlier: return QColor(0xf1, 0xd9, 0xd3);
  }
  return Qt::black;
}

QColor KvOccupancyRaster::ruleColour(int rule) {
  static const QColor first[] = {QColor(0xd7, 0x30, 0x27), QColor(0xf0, 0x8c, 0x00)};
  return rule < 2 ? first[rule] : categoryColor(rule + 3).darker(120);
}

QString KvOccupancyRaster::stateName(CellState state) {
  switch (state) {
    case CellState::NotYet: return tr("not yet generated");
    case CellState::Live: return tr("live");
    case CellState::Sink: return tr("sink (always kept)");
    case CellState::KeptRecent: return tr("recent window (always kept)");
    case CellState::KeptByGate: return tr("kept by the learned gate");
    case CellState::EvictedNow: return tr("evicted at this step");
    case CellState::EvictedEarlier: return tr("evicted earlier");
  }
  return {};
}

bool KvOccupancyRaster::hasRaster() const {
  if (!result_ || run_ < 0 || run_ >= static_cast<int>(result_->record.runs.size())) return false;
  const OccupancyRecord& r = result_->record;
  if (layer_ < 0 || layer_ >= r.layers || kvHead_ < 0 || kvHead_ >= r.kvHeads) return false;
  return !raster().cells.empty();
}

const HeadRaster& KvOccupancyRaster::raster() const { return result_->record.raster(run_, layer_, kvHead_); }

std::vector<KvOccupancyRaster::LegendItem> KvOccupancyRaster::legendItems() const {
  std::vector<LegendItem> items;
  if (!hasRaster()) return items;
  bool seen[7] = {};
  for (CellState s : raster().cells) seen[static_cast<int>(s)] = true;
  for (CellState s : {CellState::Live, CellState::Sink, CellState::KeptRecent, CellState::KeptByGate, CellState::EvictedEarlier, CellState::NotYet})
    if (seen[static_cast<int>(s)]) items.push_back({stateColour(s), stateName(s)});
  const OccupancyRun& run = result_->record.runs[run_];
  for (size_t i = 0; i < run.rules.size(); ++i)
    items.push_back({ruleColour(static_cast<int>(i)), tr("evicted at this step: %1").arg(QString::fromStdString(run.rules[i]))});
  return items;
}

int KvOccupancyRaster::legendHeight(int width) const {
  const QFontMetrics fm(font());
  int x = 0, lines = 1;
  for (const LegendItem& item : legendItems()) {
    const int w = kSwatch + 4 + fm.horizontalAdvance(item.text) + 14;
    if (x > 0 && x + w > width) {
      ++lines;
      x = 0;
    }
    x += w;
  }
  return lines * (fm.height() + 4) + 6;
}

KvOccupancyRaster::Layout KvOccupancyRaster::layout() const {
  Layout out;
  const OccupancyRecord& r = result_->record;
  const QFontMetrics fm(font());
  const QStringList& text = result_->tokenText[run_];
  for (int p = 0; p < r.steps; ++p)
    out.labelWidth = std::max(out.labelWidth, fm.horizontalAdvance(QStringLiteral("%1 %2").arg(p).arg(text[p])));
  out.labelWidth = std::min(out.labelWidth, kMaxLabelWidth) + 6;
  const int legend = legendHeight(width() - 2 * kMargin);
  const int availableW = width() - 2 * kMargin - out.labelWidth;
  const int availableH = height() - kTop - legend - kMargin;
  out.cell = std::max(1.0, std::min(availableW, availableH) / static_cast<double>(r.steps));
  const int side = static_cast<int>(std::floor(out.cell * r.steps));
  out.cells = QRect(kMargin + out.labelWidth, kTop, side, side);
  out.legend = QRect(kMargin, out.cells.bottom() + 8, width() - 2 * kMargin, legend);
  return out;
}

void KvOccupancyRaster::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (!hasRaster()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, emptyText_);
    return;
  }
  const OccupancyRecord& r = result_->record;
  const HeadRaster& h = raster();
  const Layout L = layout();
  QImage image(r.steps, r.steps, QImage::Format_RGB32);  // x = step, y = position
  for (int step = 0; step < r.steps; ++step)
    for (int p = 0; p < r.steps; ++p) {
      const size_t i = r.cell(step, p);
      const CellState s = h.cells[i];
      image.setPixel(step, p, (s == CellState::EvictedNow ? ruleColour(h.rule[i]) : stateColour(s)).rgb());
    }
  drawCells(painter, L.cells, image);  // nearest-neighbour: every cell a sharp block
  if (L.cell >= 6) {                  // thin white grid when cells are large enough to read
    painter.setPen(QPen(QColor(255, 255, 255, 160), 1));
    for (int i = 1; i < r.steps; ++i) {
      const int x = L.cells.left() + static_cast<int>(i * L.cell), y = L.cells.top() + static_cast<int>(i * L.cell);
      painter.drawLine(x, L.cells.top(), x, L.cells.bottom());
      painter.drawLine(L.cells.left(), y, L.cells.right(), y);
    }
  }
  // where the prompt ends: generated positions below, generating steps to the right
  if (r.promptLength < r.steps) {
    painter.setPen(QPen(QColor(40, 40, 40), 1.5, Qt::DashLine));
    const int x = L.cells.left() + static_cast<int>(r.promptLength * L.cell);
    const int y = L.cells.top() + static_cast<int>(r.promptLength * L.cell);
    painter.drawLine(x, L.cells.top() - 4, x, L.cells.bottom());
    painter.drawLine(L.cells.left() - 4, y, L.cells.right(), y);
  }
  // title and step ticks
  const QFontMetrics fm(font());
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawText(QRect(L.cells.left(), 0, width() - L.cells.left(), fm.height() + 2), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("decoding step \u2192   (prompt: steps 0\u2013%1, then %2 generated)").arg(r.promptLength - 1).arg(r.steps - r.promptLength));
  const int every = std::max(1, static_cast<int>(std::ceil(fm.horizontalAdvance(QStringLiteral("000")) / L.cell)));
  for (int step = 0; step < r.steps; step += every) {
    const int x = L.cells.left() + static_cast<int>((step + 0.5) * L.cell);
    painter.drawText(QRect(x - 20, kTop - fm.height() - 2, 40, fm.height()), Qt::AlignCenter, QString::number(step));
  }
  // token text down the side, thinned when the rows are smaller than the text
  const QStringList& text = result_->tokenText[run_];
  const int rowsPerLabel = std::max(1, static_cast<int>(std::ceil(fm.height() / L.cell)));
  for (int p = 0; p < r.steps; p += rowsPerLabel) {
    const int y = L.cells.top() + static_cast<int>((p + 0.5) * L.cell);
    const QString label = fm.elidedText(QStringLiteral("%1 %2").arg(p).arg(text[p]), Qt::ElideRight, L.labelWidth - 6);
    painter.setPen(p < r.promptLength ? palette().color(QPalette::WindowText) : QColor(0x1f, 0x5f, 0xa8));
    painter.drawText(QRect(kMargin, y - fm.height() / 2, L.labelWidth - 6, fm.height()), Qt::AlignRight | Qt::AlignVCenter, label);
  }
  // legend
  int x = L.legend.left(), y = L.legend.top();
  painter.setPen(palette().color(QPalette::WindowText));
  for (const LegendItem& item : legendItems()) {
    const int w = kSwatch + 4 + fm.horizontalAdvance(item.text) + 14;
    if (x > L.legend.left() && x + w > L.legend.right()) {
      x = L.legend.left();
      y += fm.height() + 4;
    }
    painter.fillRect(QRect(x, y + (fm.height() - kSwatch) / 2, kSwatch, kSwatch), item.colour);
    painter.drawRect(QRect(x, y + (fm.height() - kSwatch) / 2, kSwatch, kSwatch));
    painter.drawText(QRect(x + kSwatch + 4, y, w, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, item.text);
    x += w;
  }
}

QString KvOccupancyRaster::describeCell(int step, int position) const {
  if (!hasRaster()) return {};
  const OccupancyRecord& r = result_->record;
  if (step < 0 || position < 0 || step >= r.steps || position >= r.steps) return {};
  const HeadRaster& h = raster();
  const size_t i = r.cell(step, position);
  QString state = stateName(h.cells[i]);
  if (h.cells[i] == CellState::EvictedNow) state += QStringLiteral(" (%1)").arg(QString::fromStdString(result_->record.runs[run_].rules[h.rule[i]]));
  if (h.cells[i] == CellState::EvictedEarlier)
    for (int s = step - 1; s >= 0; --s)
      if (h.cells[r.cell(s, position)] == CellState::EvictedNow) {
        state += tr(" at step %1 (%2)").arg(s).arg(QString::fromStdString(result_->record.runs[run_].rules[h.rule[r.cell(s, position)]]));
        break;
      }
  if (!h.gate.empty() && std::isfinite(h.gate[i])) state += tr(", gate g = %1").arg(h.gate[i], 0, 'f', 3);
  return state;
}

void KvOccupancyRaster::mouseMoveEvent(QMouseEvent* event) {
  if (!hasRaster()) return;
  const Layout L = layout();
  const QPointF at = event->position();
  if (!L.cells.contains(at.toPoint())) return QToolTip::hideText();
  const int step = static_cast<int>((at.x() - L.cells.left()) / L.cell), position = static_cast<int>((at.y() - L.cells.top()) / L.cell);
  const QString cell = describeCell(step, position);
  if (cell.isEmpty()) return QToolTip::hideText();
  const QStringList& text = result_->tokenText[run_];
  const int live = result_->record.runs[run_].headLive[static_cast<size_t>(step) * result_->record.layers * result_->record.kvHeads +
                                                        static_cast<size_t>(layer_) * result_->record.kvHeads + kvHead_];
  QToolTip::showText(event->globalPosition().toPoint(),
                     tr("step %1 (fed \u201c%2\u201d%3)\nposition %4 \u201c%5\u201d%6\n%7\n%8 entries live in this head after the step")
                         .arg(step).arg(text[step]).arg(step >= result_->record.promptLength ? tr(", generated") : QString())
                         .arg(position).arg(text[position]).arg(position >= result_->record.promptLength ? tr(", generated") : QString())
                         .arg(cell).arg(live),
                     this);
}

}  // namespace attnlab
