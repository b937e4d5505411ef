#include "forward_pass_view.h"

#include "head_selection.h"

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTextStream>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>
#include <functional>

#include "attention_map_model.h"
#include "colormap.h"

namespace attnlab {

// A small matrix drawn as coloured cells with their numbers, column labels on top and row labels
// to the left; hover a cell for its explanation.
class CellGrid : public QWidget {
 public:
  enum class Colour { Diverging, Weight, Mask };
  using Tip = std::function<QString(int row, int col)>;

  explicit CellGrid(QWidget* parent) : QWidget(parent) { setMouseTracking(true); }

  void set(std::vector<std::vector<double>> cells, QStringList rowLabels, QStringList colLabels, Colour colour, Tip tip) {
    cells_ = std::move(cells);
    rowLabels_ = std::move(rowLabels);
    colLabels_ = std::move(colLabels);
    colour_ = colour;
    tip_ = std::move(tip);
    range_ = 1e-9;
    for (const auto& row : cells_)
      for (double x : row)
        if (std::isfinite(x)) range_ = std::max(range_, std::fabs(x));
    updateGeometry();
    setMinimumSize(sizeHint());
    update();
  }
  const std::vector<std::vector<double>>& cells() const { return cells_; }

  QSize sizeHint() const override {
    const int cols = cells_.empty() ? 0 : int(cells_[0].size());
    return {labelWidth() + cols * cell() + 4, headerHeight() + int(cells_.size()) * cell() + 4};
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setFont(cellFont());
    const int kCell = cell(), kLabelWidth = labelWidth(), kHeaderHeight = headerHeight();
    for (int c = 0; c < colLabels_.size(); ++c)
      p.drawText(QRect(kLabelWidth + c * kCell, 0, kCell, kHeaderHeight), Qt::AlignCenter, p.fontMetrics().elidedText(colLabels_[c], Qt::ElideRight, kCell));
    for (int r = 0; r < int(cells_.size()); ++r) {
      p.setPen(palette().color(QPalette::WindowText));
      if (r < rowLabels_.size())
        p.drawText(QRect(0, kHeaderHeight + r * kCell, kLabelWidth - 4, kCell), Qt::AlignRight | Qt::AlignVCenter, rowLabels_[r]);
      for (int c = 0; c < int(cells_[r].size()); ++c) {
        const QRect cell(kLabelWidth + c * kCell, kHeaderHeight + r * kCell, kCell - 1, kCell - 1);
        const double x = cells_[r][c];
        const QColor fill = colourOf(x);
        p.fillRect(cell, fill);
        p.setPen(fill.lightnessF() > 0.55 ? Qt::black : Qt::white);
        p.drawText(cell, Qt::AlignCenter, textOf(x));
      }
    }
  }
  bool event(QEvent* e) override {
    if (e->type() == QEvent::FontChange) setMinimumSize(sizeHint());
    if (e->type() == QEvent::ToolTip && tip_) {
      const QPoint at = static_cast<QHelpEvent*>(e)->pos() - QPoint(labelWidth(), headerHeight());
      const int r = at.y() / cell(), c = at.x() / cell();
      if (at.x() >= 0 && at.y() >= 0 && r < int(cells_.size()) && c < int(cells_[r].size()))
        QToolTip::showText(static_cast<QHelpEvent*>(e)->globalPos(), tip_(r, c), this);
      else
        QToolTip::hideText();
      return true;
    }
    return QWidget::event(e);
  }

 private:
  // Cells fit their numbers at the current font (presenter mode enlarges it).
  QFont cellFont() const {
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.75);
    return small;
  }
  int cell() const { return std::max(38, QFontMetrics(cellFont()).horizontalAdvance(QStringLiteral("-0.00")) + 8); }
  int labelWidth() const { return std::max(56, QFontMetrics(font()).horizontalAdvance(QStringLiteral("q\u00b7k/\u221ad ")) + 8); }
  int headerHeight() const { return QFontMetrics(cellFont()).height() + 2; }
  QColor colourOf(double x) const {
    if (colour_ == Colour::Mask) return x > 0 ? QColor(90, 160, 90) : QColor(0xe2, 0xe2, 0xe2);
    if (!std::isfinite(x)) return QColor(0xe2, 0xe2, 0xe2);
    if (colour_ == Colour::Weight) return rampColor(x);
    // blue for negative, red for positive, white at zero
    const double t = std::clamp(x / range_, -1.0, 1.0);
    const QColor end = t < 0 ? QColor(40, 90, 200) : QColor(200, 50, 40);
    const double a = std::fabs(t);
    return QColor::fromRgbF(1 - a * (1 - end.redF()), 1 - a * (1 - end.greenF()), 1 - a * (1 - end.blueF()));
  }
  QString textOf(double x) const {
    if (colour_ == Colour::Mask) return x > 0 ? QStringLiteral("sees") : QStringLiteral("\u2212\u221e");
    if (!std::isfinite(x)) return QStringLiteral("\u2212\u221e");
    return QString::number(x, 'f', std::fabs(x) >= 10 ? 1 : 2);
  }

  std::vector<std::vector<double>> cells_;
  QStringList rowLabels_, colLabels_;
  Colour colour_ = Colour::Diverging;
  Tip tip_;
  double range_ = 1;
};

namespace {

const char* kStageTitles[] = {
    "1. The query vector q = x W_q (this token's question)",
    "2. The keys k = x W_k of every visible token (what each offers)",
    "3. Scores: q·k / √d",
    "4. Positional bias added to the scores",
    "5. The causal mask: a query sees only itself and earlier tokens",
    "6. Normalisation: scores become weights",
    "7. The output: the weighted sum of the values, o = Σ_j a_j v_j",
};

}  // namespace

ForwardPassView::ForwardPassView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), attention_(context.attention), selection_(context.selection) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Query token"), this));
  queryPicker_ = new QSpinBox(this);
  queryPicker_->setToolTip(tr("The query position (1 = the probe's first token)"));
  bar->addWidget(queryPicker_);
  back_ = new QPushButton(tr("\u2190 Stage"), this);
  next_ = new QPushButton(tr("Next stage \u2192"), this);
  next_->setToolTip(tr("Show the next stage of the computation"));
  bar->addWidget(back_);
  bar->addWidget(next_);
  bar->addStretch(1);
  layout->addLayout(bar);
  heading_ = new QLabel(this);
  heading_->setWordWrap(true);
  layout->addWidget(heading_);

  page_ = new QWidget(this);
  auto* pageLayout = new QVBoxLayout(page_);
  auto addSection = [&](int stage, std::initializer_list<CellGrid**> grids) {
    auto* box = new QWidget(page_);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 6, 0, 6);
    auto* title = new QLabel(QStringLiteral("<b>%1</b>").arg(tr(kStageTitles[stage])), box);
    v->addWidget(title);
    auto* note = new QLabel(box);
    note->setWordWrap(true);
    v->addWidget(note);
    for (CellGrid** grid : grids) {
      *grid = new CellGrid(box);
      v->addWidget(*grid, 0, Qt::AlignLeft);
    }
    pageLayout->addWidget(box);
    sections_.push_back(box);
    notes_.push_back(note);
  };
  addSection(Query, {&qGrid_});
  addSection(Keys, {&kGrid_});
  addSection(Scores, {&scoreGrid_});
  addSection(Bias, {&biasGrid_});
  addSection(Mask, {&maskGrid_});
  addSection(Weights, {&weightGrid_});
  addSection(Output, {&vGrid_, &outGrid_});
  pageLayout->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(page_);
  scroll->setWidgetResizable(true);
  layout->addWidget(scroll, 1);

  connect(back_, &QPushButton::clicked, this, [this] { setStage(stage_ - 1); });
  connect(next_, &QPushButton::clicked, this, [this] { setStage(stage_ + 1); });
  connect(queryPicker_, &QSpinBox::valueChanged, this, [this](int v) {
    if (!attention_->hasMap()) return;
    followLast_ = v == selection_->shown().size();
    rebuild();
  });
  connect(attention_, &AttentionMapModel::mapChanged, this, &ForwardPassView::rebuild);
  connect(selection_, &HeadSelection::headChanged, this, &ForwardPassView::rebuild);
  rebuild();
}

void ForwardPassView::setStage(int stage) {
  stage_ = std::clamp(stage, 0, StageCount - 1);
  showStages();
}

void ForwardPassView::setQuery(int position) {
  if (!attention_->hasMap()) return;
  queryPicker_->setValue(position < 0 ? selection_->shown().size() : position + 1);
}

int ForwardPassView::query() const { return queryPicker_->value() - 1; }

std::vector<double> ForwardPassView::shownOutput() const { return outGrid_->cells().empty() ? std::vector<double>{} : outGrid_->cells()[0]; }

void ForwardPassView::rebuild() {
  const HeadTrace* head = attention_->hasMap() ? attention_->head(selection_->layer(), selection_->head()) : nullptr;
  hasPass_ = head && head->q.rows() > 0;
  if (!hasPass_) {
    heading_->setText(tr("Train or open an experiment: the explainer shows the selected head's computation on the probe."));
    for (QWidget* s : sections_) s->hide();
    return;
  }
  const int T = selection_->shown().size();
  {
    const QSignalBlocker block(queryPicker_);
    queryPicker_->setRange(1, T);
    if (followLast_ || queryPicker_->value() > T) queryPicker_->setValue(T);
  }
  pass_ = explainHead(*head, attention_->headMap(selection_->layer(), selection_->head()).variant().toStdString(), query());
  const ForwardPass& f = pass_;
  const QString token = attention_->tokenLabel(f.query);
  heading_->setText(tr("Layer %1, head %2 (%3) %4; query: position %5 \u201c%6\u201d")
                        .arg(selection_->layer() + 1)
                        .arg(selection_->head() + 1)
                        .arg(QString::fromStdString(f.variant))
                        .arg((attention_->isOpenedModel() ? tr("of %1") : tr("at %1")).arg(attention_->stageText()))
                        .arg(f.query + 1)
                        .arg(token));
  QStringList dims, keyLabels, allLabels;
  for (int c = 0; c < f.dHead; ++c) dims << QString::number(c + 1);
  for (int j : f.keys) keyLabels << QStringLiteral("%1 %2").arg(j + 1).arg(attention_->tokenLabel(j));
  for (int j = 0; j < T; ++j) allLabels << QString::number(j + 1);
  const auto fmt = [](double x) { return QString::number(x, 'f', 4); };

  // Vectors are drawn with their d dimensions across, one row per token.
  qGrid_->set({std::vector<double>(f.q.begin(), f.q.end())}, {QStringLiteral("q")}, dims, CellGrid::Colour::Diverging,
              [&f, fmt](int, int c) { return QStringLiteral("q_%1 = %2").arg(c + 1).arg(fmt(f.q[c])); });
  std::vector<std::vector<double>> k, v;
  for (size_t j = 0; j < f.keys.size(); ++j) {
    k.emplace_back(f.k[j].begin(), f.k[j].end());
    v.emplace_back(f.v[j].begin(), f.v[j].end());
  }
  QStringList keyRows;
  for (int j : f.keys) keyRows << QStringLiteral("k%1").arg(j + 1);
  kGrid_->set(k, keyRows, dims, CellGrid::Colour::Diverging, [this](int r, int c) {
    return tr("k_%1 of position %2 (\u201c%3\u201d) = %4").arg(c + 1).arg(pass_.keys[r] + 1).arg(attention_->tokenLabel(pass_.keys[r])).arg(pass_.k[r][c], 0, 'f', 4);
  });
  notes_[Query]->setText(tr("d_head = %1 numbers, after the positional rotation if the model uses RoPE.").arg(f.dHead));
  notes_[Keys]->setText(int(f.keys.size()) == f.query + 1
                            ? tr("%1 keys are visible to position %2: the token itself and every token before it.").arg(f.keys.size()).arg(f.query + 1)
                            : tr("%1 keys are visible to position %2: a window of the latest tokens (positions %3 to %2).")
                                  .arg(f.keys.size()).arg(f.query + 1).arg(f.keys.empty() ? f.query + 1 : f.keys.front() + 1));

  scoreGrid_->set({f.scaled}, {QStringLiteral("q\u00b7k/\u221ad")}, keyLabels, CellGrid::Colour::Diverging,
                  [this](int, int c) { return QString::fromStdString(explainScore(pass_, c)); });
  notes_[Scores]->setText(f.normalisation == "linear"
                             ? tr("Linear attention does not use q\u00b7k/\u221ad (shown for comparison): its score is m = \u03c6(q)\u00b7\u03c6(k) with \u03c6 = elu + 1, always positive (next row).")
                             : tr("The dot product grows with the dimension, so it is divided by \u221a%1 = %2.").arg(f.dHead).arg(std::sqrt(double(f.dHead)), 0, 'f', 3));
  double largestBias = 0;
  for (double b : f.bias) largestBias = std::max(largestBias, std::fabs(b));
  biasGrid_->set({f.bias, f.score}, {tr("bias"), tr("score")}, keyLabels, CellGrid::Colour::Diverging, [this](int r, int c) {
    return r == 0 ? tr("bias = score \u2212 q\u00b7k/\u221ad = %1 \u2212 %2 = %3").arg(pass_.score[c], 0, 'f', 4).arg(pass_.scaled[c], 0, 'f', 4).arg(pass_.bias[c], 0, 'f', 4)
                  : QString::fromStdString(explainScore(pass_, c));
  });
  notes_[Bias]->setText(f.normalisation == "linear" ? tr("The linear kernel adds no bias: the score row is m = \u03c6(q)\u00b7\u03c6(k).")
                        : largestBias < 1e-4 ? tr("This model adds no bias to the scores (its positions are in q and k, or absent): every bias is 0.")
                                           : tr("The positional encoding adds a bias to each score (ALiBi: \u2212m\u00b7distance); the largest here is %1.").arg(largestBias, 0, 'f', 3));
  std::vector<double> mask(T);
  for (int j = 0; j < T; ++j) mask[j] = f.visible[j] ? 1 : 0;
  maskGrid_->set({mask}, {tr("key")}, allLabels, CellGrid::Colour::Mask, [this](int, int j) {
    return pass_.visible[j] ? tr("key %1 is visible to query %2").arg(j + 1).arg(pass_.query + 1)
                            : tr("key %1 comes after query %2: score \u2212\u221e, weight exactly 0").arg(j + 1).arg(pass_.query + 1);
  });
  notes_[Mask]->setText(tr("%1 of %2 keys are visible; the rest get \u2212\u221e before normalising.").arg(f.keys.size()).arg(T));

  weightGrid_->set({f.weight}, {tr("weight")}, keyLabels, CellGrid::Colour::Weight,
                   [this](int, int c) { return QString::fromStdString(explainWeight(pass_, c)); });
  double worst = 0;
  for (size_t j = 0; j < f.recomputed.size(); ++j) worst = std::max(worst, std::fabs(f.recomputed[j] - f.weight[j]));
  QString normalisation;
  if (f.normalisation == "softmax")
    normalisation = tr("softmax: a_j = exp(score_j \u2212 max) / \u03a3 exp(score \u2212 max); the max (%1) is subtracted so nothing overflows. "
                       "Recomputed from the scores above, the weights match the engine's to %2.").arg(f.maxScore, 0, 'f', 3).arg(worst, 0, 'g', 2);
  else if (f.normalisation == "sigmoid")
    normalisation = tr("sigmoid: a_j = 1 / (1 + exp(\u2212score_j)), each key on its own, so the weights need not sum to 1. Recomputed, they match the engine's to %1.").arg(worst, 0, 'g', 2);
  else if (f.normalisation == "linear")
    normalisation = tr("linear kernel: a_j = m_j / \u03a3 m, each positive score's share of the row (no exponential). Recomputed, the weights match the engine's to %1.").arg(worst, 0, 'g', 2);
  else if (f.normalisation == "presence") {
    double least = 1;
    for (double p : f.presence) least = std::min(least, p);
    normalisation = tr("presence coupling (OAttention): a_j = p_j exp(score_j \u2212 max) / \u03a3 p exp(score \u2212 max), each key weighted by its "
                       "token's presence p = \u2016h\u2016\u00b2 / (\u03c4 + \u2016h\u2016\u00b2) (the least here %1; a token with p = 0 gets exactly 0). "
                       "Recomputed, the weights match the engine's to %2.").arg(least, 0, 'f', 4).arg(worst, 0, 'g', 2);
  } else
    normalisation = tr("The %1 variant normalises in its own way (see the user guide); the weights are the engine's.").arg(QString::fromStdString(f.variant));
  if (!f.recomputed.empty() && worst > 1e-3)
    normalisation += tr(" They differ here: the variant also scales or gates its scores (a temperature, a window, a gate, low precision).");
  notes_[Weights]->setText(normalisation + tr(" This row sums to %1.").arg(f.weightSum, 0, 'f', 4));

  QStringList valueRows;
  for (int j : f.keys) valueRows << QStringLiteral("v%1").arg(j + 1);
  vGrid_->set(v, valueRows, dims, CellGrid::Colour::Diverging, [this](int r, int c) {
    return tr("v_%1 of position %2, weighted by a = %3").arg(c + 1).arg(pass_.keys[r] + 1).arg(pass_.weight[r], 0, 'f', 4);
  });
  outGrid_->set({f.output}, {QStringLiteral("o")}, dims, CellGrid::Colour::Diverging,
                [this](int, int c) { return QString::fromStdString(explainOutput(pass_, c)); });
  notes_[Output]->setText(tr("Each value row is weighted by its key's weight and the rows are added up%1: the output (bottom row) "
                             "goes, with the other heads', through W_o into the residual stream.")
                              .arg(f.normalisation == "presence" ? tr(", then multiplied by the query's own presence p = %1").arg(f.queryPresence, 0, 'f', 4) : QString()));
  showStages();
}

void ForwardPassView::showStages() {
  for (int s = 0; s < int(sections_.size()); ++s) sections_[s]->setVisible(hasPass_ && s <= stage_);
  back_->setEnabled(hasPass_ && stage_ > 0);
  next_->setEnabled(hasPass_ && stage_ < StageCount - 1);
}

QString ForwardPassView::exportName() const {
  return QStringLiteral("forward-pass-L%1-H%2-q%3").arg(selection_->layer() + 1).arg(selection_->head() + 1).arg(pass_.query + 1);
}

QWidget* ForwardPassView::exportWidget() { return page_; }

void ForwardPassView::writeCsv(QTextStream& out) const {
  out << "key_position,q_dot_k,scaled,bias,score,weight\n";
  for (size_t j = 0; j < pass_.keys.size(); ++j)
    out << pass_.keys[j] + 1 << ',' << pass_.dot[j] << ',' << pass_.scaled[j] << ',' << pass_.bias[j] << ',' << pass_.score[j] << ','
        << pass_.weight[j] << '\n';
  out << "output_dim,value\n";
  for (size_t c = 0; c < pass_.output.size(); ++c) out << c + 1 << ',' << pass_.output[c] << '\n';
}

}  // namespace attnlab
