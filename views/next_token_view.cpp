#include "next_token_view.h"

#include <QComboBox>
#include <QContextMenuEvent>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTextStream>
#include <QVBoxLayout>
#include <algorithm>

#include "attention_map_model.h"
#include "head_selection.h"
#include "next_token_model.h"

namespace attnlab {

namespace {

enum Column { Rank, Token, Id, Probability, Full, Logit, ColumnCount };

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(align);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  return item;
}

QString percent(double p) { return p >= 0.001 ? QString::number(100 * p, 'f', 1) + QLatin1Char('%') : QString::number(p, 'e', 1); }

}  // namespace

NextTokenView::NextTokenView(const ViewContext& context, QWidget* parent)
    : QWidget(parent), attention_(context.attention), model_(new NextTokenModel(context.attention, context.selection, context.session, this)) {
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);

  temperature_ = new QDoubleSpinBox(this);
  temperature_->setRange(0.05, 10.0);
  temperature_->setSingleStep(0.1);
  temperature_->setDecimals(2);
  temperature_->setValue(1.0);
  temperature_->setToolTip(tr("p \u221d exp(logit / T): below 1 sharper, above 1 flatter"));
  topK_ = new QSpinBox(this);
  topK_->setRange(0, 1000000);
  topK_->setSpecialValueText(tr("all"));
  topK_->setToolTip(tr("Keep only the k most likely tokens (0: all)"));
  topP_ = new QDoubleSpinBox(this);
  topP_->setRange(0.01, 1.0);
  topP_->setSingleStep(0.05);
  topP_->setDecimals(2);
  topP_->setValue(1.0);
  topP_->setToolTip(tr("Then keep the most likely tokens until their mass (renormalised after top-k) reaches p (nucleus sampling; 1: all)"));
  for (QDoubleSpinBox* box : {temperature_, topP_}) connect(box, &QDoubleSpinBox::valueChanged, this, &NextTokenView::applySettings);
  connect(topK_, &QSpinBox::valueChanged, this, &NextTokenView::applySettings);

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Temperature"), this));
  controls->addWidget(temperature_);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Top-k"), this));
  controls->addWidget(topK_);
  controls->addSpacing(12);
  controls->addWidget(new QLabel(tr("Top-p"), this));
  controls->addWidget(topP_);
  controls->addStretch(1);

  summary_ = new QLabel(this);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_ = new QTableWidget(0, ColumnCount, this);
  table_->setHorizontalHeaderLabels({tr("#"), tr("Token"), tr("Id"), tr("Probability"), tr("softmax(z/T)"), tr("Logit z")});
  table_->horizontalHeaderItem(Probability)->setToolTip(tr("In the distribution restricted to top-k and top-p, renormalised: what sampling draws from"));
  table_->horizontalHeaderItem(Full)->setToolTip(tr("Before the top-k / top-p cut: softmax of logits / T over the whole vocabulary"));
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(Token, QHeaderView::Stretch);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);

  tokens_ = new QSpinBox(this);
  tokens_->setRange(1, 1024);
  tokens_->setValue(8);
  tokens_->setToolTip(tr("How many tokens to append to the probe"));
  decoding_ = new QComboBox(this);
  decoding_->addItem(tr("greedy (most likely)"));
  decoding_->addItem(tr("sample (the distribution above)"));
  seed_ = new QSpinBox(this);
  seed_->setRange(0, 1 << 30);
  seed_->setValue(1);
  seed_->setToolTip(tr("Seed of the sampling draws (the same seed repeats a generation)"));
  generate_ = new QPushButton(tr("Generate"), this);
  generate_->setToolTip(tr("Append tokens to the probe, computed on a worker a few at a time; every view follows"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(160);
  progress_->setTextVisible(true);
  status_ = new QLabel(this);
  connect(generate_, &QPushButton::clicked, this, &NextTokenView::startGeneration);
  connect(cancel_, &QPushButton::clicked, model_, &NextTokenModel::cancelGeneration);
  connect(decoding_, &QComboBox::currentIndexChanged, this, &NextTokenView::applySettings);

  auto* generation = new QHBoxLayout;
  generation->addWidget(generate_);
  generation->addWidget(tokens_);
  generation->addWidget(new QLabel(tr("tokens,"), this));
  generation->addWidget(decoding_);
  generation->addWidget(new QLabel(tr("seed"), this));
  generation->addWidget(seed_);
  generation->addWidget(cancel_);
  generation->addWidget(progress_);
  generation->addWidget(status_, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(caption_);
  layout->addLayout(controls);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  layout->addLayout(generation);

  connect(model_, &NextTokenModel::predictionChanged, this, &NextTokenView::showPrediction);
  connect(model_, &NextTokenModel::generationChanged, this, &NextTokenView::showGeneration);
  connect(model_, &NextTokenModel::failed, status_, &QLabel::setText);
  showPrediction();
  showGeneration();
}

void NextTokenView::applySettings() {
  SamplingSettings s;
  s.temperature = temperature_->value();
  s.topK = topK_->value();
  s.topP = topP_->value();
  s.greedy = decoding_->currentIndex() == 0;
  model_->setSettings(s);
}

void NextTokenView::startGeneration() { model_->generate(tokens_->value(), static_cast<uint64_t>(seed_->value())); }

QString NextTokenView::summary() const { return summary_->text(); }

void NextTokenView::showPrediction() {
  const auto p = model_->prediction();
  table_->setRowCount(0);
  if (!p) {
    caption_->setText(tr("No probe traced yet."));
    summary_->clear();
    return;
  }
  const TraceSnapshot* shown = attention_->snapshot();
  const int length = shown ? static_cast<int>(shown->trace.tokens.size()) : 0;
  caption_->setText(tr("The token after position %1 \u201c%2\u201d (%3 of %4; click a heatmap row to choose another) \u00b7 %5")
                        .arg(p->position)
                        .arg(attention_->tokenLabel(p->position))
                        .arg(p->position + 1 == length ? tr("the last") : tr("the selected query"))
                        .arg(length)
                        .arg(attention_->stageText()));
  const NextTokenDistribution& d = p->distribution;
  summary_->setText(tr("%1 of %2 tokens kept, holding %3 of softmax(z/T) before renormalising")
                        .arg(d.kept.size())
                        .arg(d.vocab)
                        .arg(percent(d.keptMass)));
  const int rows = std::min<int>(d.kept.size(), kShownRows);
  table_->setRowCount(rows);
  const double top = d.kept.empty() ? 1.0 : d.kept.front().probability;
  for (int r = 0; r < rows; ++r) {
    const TokenChance& c = d.kept[r];
    table_->setItem(r, Rank, cell(QString::number(r + 1)));
    table_->setItem(r, Token, cell(r < p->labels.size() ? p->labels[r] : QString(), Qt::AlignLeft | Qt::AlignVCenter));
    table_->setItem(r, Id, cell(QString::number(c.token)));
    auto* prob = cell(percent(c.probability));
    QColor bar(66, 133, 244);
    bar.setAlpha(static_cast<int>(40 + 160 * c.probability / std::max(top, 1e-12)));
    prob->setBackground(bar);
    table_->setItem(r, Probability, prob);
    table_->setItem(r, Full, cell(percent(c.full)));
    table_->setItem(r, Logit, cell(QString::number(c.logit, 'f', 3)));
  }
}

void NextTokenView::showGeneration() {
  const bool running = model_->generating();
  generate_->setEnabled(!running);
  cancel_->setEnabled(running);
  progress_->setVisible(running);
  progress_->setRange(0, std::max(1, model_->requested()));
  progress_->setValue(model_->generated());
  if (running) status_->setText(tr("generating %1 of %2 tokens\u2026").arg(model_->generated()).arg(model_->requested()));
  else if (!model_->message().isEmpty()) status_->setText(model_->message());
  else if (model_->requested() > 0) status_->setText(tr("appended %1 tokens to the probe").arg(model_->generated()));
}

void NextTokenView::settle() {
  model_->waitForIdle();
  QCoreApplication::processEvents();
}

bool NextTokenView::hasExportData() const { return model_->prediction() != nullptr; }

void NextTokenView::writeCsv(QTextStream& out) const {
  out << "rank,token,id,probability,softmax_at_temperature,logit\n";
  const auto p = model_->prediction();
  if (!p) return;
  const NextTokenDistribution& d = p->distribution;
  for (int r = 0; r < static_cast<int>(d.kept.size()); ++r) {
    const TokenChance& c = d.kept[r];
    out << r + 1 << ',' << csvField(r < p->labels.size() ? p->labels[r] : QString()) << ',' << c.token << ','
        << QString::number(c.probability, 'g', 9) << ',' << QString::number(c.full, 'g', 9) << ',' << QString::number(c.logit, 'g', 9)
        << '\n';
  }
}

void NextTokenView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
