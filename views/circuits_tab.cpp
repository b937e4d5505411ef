#include "circuits_tab.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTextStream>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "attention_map_model.h"
#include "head_selection.h"
#include "circuits_model.h"
#include "quoted_text.h"
#include "composition_graph.h"
#include "patching_map.h"
#include "unit_labels.h"

namespace attnlab {
namespace {

const QStringList kSites = {QStringLiteral("resid"), QStringLiteral("attn_out"), QStringLiteral("mlp_out"),
                            QStringLiteral("head_out"), QStringLiteral("pattern"), QStringLiteral("values")};

// The prompt as text that encodes back to `ids`: decoded (a subword vocabulary's token labels are
// display forms, a space shown as ␣, and would not).
QString joinTokens(const Vocabulary& vocabulary, const std::vector<int>& ids) { return QString::fromStdString(vocabulary.decode(ids)); }

// White to orange by probability.
QColor probabilityColour(double p) {
  const int fade = static_cast<int>(255 * (1 - std::clamp(p, 0.0, 1.0)));
  return QColor(255, 165 + (255 - 165) * fade / 255, fade);
}

}  // namespace

CircuitsTab::CircuitsTab(const ViewContext& context, QWidget* parent)
    : QWidget(parent),
      attention_(context.attention),
      selection_(context.selection),
      model_(new CircuitsModel(this)),
      clean_(new QLineEdit(this)),
      corrupt_(new QLineEdit(this)),
      swapPosition_(new QSpinBox(this)),
      answer_(new QComboBox(this)),
      wrong_(new QComboBox(this)),
      site_(new QComboBox(this)),
      perPosition_(new QCheckBox(tr("per position"), this)),
      run_(new QPushButton(tr("Run patching"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      map_(new PatchingMap(this)),
      lens_(new QTableWidget(this)),
      dla_(new QChartView(this)),
      graph_(new CompositionGraph(this)),
      compositionKind_(new QComboBox(this)),
      threshold_(new QDoubleSpinBox(this)),
      retrievalRun_(new QPushButton(tr("Retrieval heads"), this)),
      retrievalK_(new QSpinBox(this)),
      retrievalStatus_(new QLabel(this)),
      retrieval_(new QTableWidget(this)) {
  clean_->setPlaceholderText(tr("clean prompt, in the task's tokens"));
  corrupt_->setPlaceholderText(tr("corrupted prompt: as many tokens, one changed"));
  auto* swap = new QPushButton(tr("Corrupt: swap token at"), this);
  swap->setToolTip(tr("Copy the clean prompt with the token at this position replaced by another"));
  swapPosition_->setObjectName(QStringLiteral("swapPosition"));
  site_->addItems(kSites);
  for (QComboBox* box : {answer_, wrong_}) box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  site_->setToolTip(tr("resid: the stream entering each block (last row: the final residual); head_out, pattern, values: per head"));
  cancel_->setEnabled(false);
  progress_->setTextVisible(true);
  status_->setWordWrap(true);

  auto* pair = new QFormLayout;
  pair->addRow(tr("Clean"), clean_);
  auto* corruptRow = new QHBoxLayout;
  corruptRow->addWidget(corrupt_, 1);
  corruptRow->addWidget(swap);
  corruptRow->addWidget(swapPosition_);
  pair->addRow(tr("Corrupted"), corruptRow);
  auto* controls = new QHBoxLayout;
  for (auto [label, widget] : {std::pair<QString, QWidget*>{tr("Answer"), answer_}, {tr("Wrong"), wrong_}, {tr("Site"), site_}}) {
    controls->addWidget(new QLabel(label, this));
    controls->addWidget(widget);
  }
  controls->addWidget(perPosition_);
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_, 1);
  pair->addRow(controls);
  pair->addRow(status_);

  lens_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  lens_->horizontalHeader()->setDefaultSectionSize(44);
  dla_->setRenderHint(QPainter::Antialiasing);
  dla_->setMinimumHeight(180);
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(lens_);
  right->addWidget(dla_);
  right->addWidget(retrievalPane());
  compositionKind_->addItems({tr("K-composition"), tr("Q-composition"), tr("V-composition")});
  compositionKind_->setToolTip(tr("|W_QK2 W_OV1| (K), |W_QK2^T W_OV1| (Q) or |W_OV2 W_OV1| (V), each over the norms of the two"));
  threshold_->setRange(0, 1);
  threshold_->setDecimals(3);
  threshold_->setSingleStep(0.01);
  threshold_->setValue(0.3);
  threshold_->setToolTip(tr("Edges with a score at least this; set to the strongest tenth of the pairs on each new model"));
  auto* graphControls = new QHBoxLayout;
  graphControls->addWidget(new QLabel(tr("Composition"), this));
  graphControls->addWidget(compositionKind_);
  graphControls->addWidget(new QLabel(tr("threshold"), this));
  graphControls->addWidget(threshold_);
  graphControls->addStretch(1);
  auto* graphPane = new QWidget(this);
  auto* graphLayout = new QVBoxLayout(graphPane);
  graphLayout->setContentsMargins(0, 0, 0, 0);
  graphLayout->addLayout(graphControls);
  graphLayout->addWidget(graph_, 1);
  auto* left = new QSplitter(Qt::Vertical, this);
  left->addWidget(map_);
  left->addWidget(graphPane);
  left->setSizes({400, 300});
  auto* results = new QSplitter(Qt::Horizontal, this);
  results->addWidget(left);
  results->addWidget(right);
  results->setStretchFactor(0, 3);
  results->setStretchFactor(1, 2);
  right->setSizes({170, 360, 200});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addLayout(pair);
  layout->addWidget(results, 1);

  connect(attention_, &AttentionMapModel::mapChanged, this, &CircuitsTab::followTrace);
  for (QLineEdit* edit : {clean_, corrupt_}) connect(edit, &QLineEdit::textChanged, this, [this] { updateCheck(); });
  connect(swap, &QPushButton::clicked, this, &CircuitsTab::swapToken);
  connect(run_, &QPushButton::clicked, this, &CircuitsTab::run);
  connect(cancel_, &QPushButton::clicked, model_, [this] {
    model_->cancel();
    status_->setText(tr("Cancelled."));
  });
  connect(model_, &CircuitsModel::busyChanged, this, [this](bool busy) {
    cancel_->setEnabled(busy);
    if (!busy) updateCheck(false);  // keeps the sweep's outcome (or failure) in the status line
  });
  connect(model_, &CircuitsModel::progress, this, [this](int done, int total) {
    if (!model_->busy()) return;  // a late report of a sweep already shown
    progress_->setMaximum(total);
    progress_->setValue(done);
  });
  connect(model_, &CircuitsModel::failed, this, [this](const QString& message) {
    (retrievalLast_ ? retrievalStatus_ : status_)->setText((retrievalLast_ ? tr("Retrieval: %1") : tr("Patching: %1")).arg(message));
  });
  connect(model_, &CircuitsModel::resultsChanged, this, &CircuitsTab::showResults);
  connect(map_, &PatchingMap::cellClicked, this, [this](int layer, int head) {
    if (!attention_->hasMap() || layer >= attention_->layerCount()) return;  // the final-residual row has no head
    selection_->select(layer, head >= 0 ? head : selection_->head());
  });
  connect(retrievalRun_, &QPushButton::clicked, this, [this] { runRetrieval(retrievalK_->value()); });
  connect(model_, &CircuitsModel::retrievalChanged, this, &CircuitsTab::showRetrieval);
  connect(retrieval_, &QTableWidget::cellClicked, selection_, &HeadSelection::select);
  connect(compositionKind_, &QComboBox::currentIndexChanged, this, [this](int index) {
    graph_->setKind(index == 0 ? CompositionKind::k : index == 1 ? CompositionKind::q : CompositionKind::v);
  });
  connect(threshold_, &QDoubleSpinBox::valueChanged, graph_, &CompositionGraph::setThreshold);
  connect(graph_, &CompositionGraph::headClicked, selection_, &HeadSelection::select);
  connect(selection_, &HeadSelection::headChanged, this, [this] { graph_->setSelected(selection_->layer(), selection_->head()); });
  graph_->setSelected(selection_->layer(), selection_->head());
  followTrace();  // a trace shown before the tab was made
  updateCheck();
}

void CircuitsTab::followTrace() {
  const TraceSnapshot* snapshot = attention_->snapshot();
  if (!snapshot || !snapshot->vocabulary || snapshot->vocabulary.get() == vocabulary_) return;
  vocabulary_ = snapshot->vocabulary.get();  // a new run: its tokens for the pickers, its probe to start from
  for (QComboBox* box : {answer_, wrong_}) {
    box->clear();
    box->addItem(box == answer_ ? tr("clean top prediction") : tr("corrupted top prediction"));
    for (const std::string& token : vocabulary_->tokens()) box->addItem(QString::fromStdString(token));
  }
  clean_->setText(joinTokens(*vocabulary_, snapshot->trace.tokens));
  corrupt_->clear();
  updateCheck();
}

QString CircuitsTab::checkPair(std::vector<int>* clean, std::vector<int>* corrupt) const {
  if (!vocabulary_ || !attention_->snapshot() || !attention_->snapshot()->model) return tr("No model yet.");
  std::string why;
  if (!vocabulary_->encode(clean_->text().toStdString(), *clean, why))
    return tr("Clean: %1").arg(shortenLongWords(QString::fromStdString(why)));
  if (!vocabulary_->encode(corrupt_->text().toStdString(), *corrupt, why))
    return tr("Corrupted: %1").arg(shortenLongWords(QString::fromStdString(why)));
  if (clean->empty() || corrupt->empty()) return tr("Enter a clean and a corrupted prompt (try the swap helper).");
  if (clean->size() != corrupt->size())
    return tr("The prompts have %1 and %2 tokens: patching needs the same length.").arg(clean->size()).arg(corrupt->size());
  if (static_cast<int>(clean->size()) > attention_->snapshot()->maxProbeLength)
    return tr("The prompts are longer than the model's context of %1.").arg(attention_->snapshot()->maxProbeLength);
  return {};
}

void CircuitsTab::updateCheck(bool showStatus) {
  std::vector<int> clean, corrupt;
  const QString why = checkPair(&clean, &corrupt);
  swapPosition_->setRange(0, std::max<int>(0, static_cast<int>(clean.size()) - 1));
  run_->setEnabled(why.isEmpty() && !model_->busy());
  if (showStatus && !model_->busy()) status_->setText(why.isEmpty() ? tr("%1 tokens each.").arg(clean.size()) : why);
}

void CircuitsTab::swapToken() {
  std::vector<int> clean;
  std::string why;
  if (!vocabulary_ || !vocabulary_->encode(clean_->text().toStdString(), clean, why) || clean.empty()) return;
  const int at = std::min<int>(swapPosition_->value(), static_cast<int>(clean.size()) - 1);
  // The next token of the vocabulary that the prompt does not use and whose text encodes back to
  // the same tokens (a subword tokenizer may merge it with its neighbours); else simply the next one.
  const int original = clean[at];
  std::vector<int> swapped = clean;
  swapped[at] = (original + 1) % vocabulary_->size();
  for (int step = 1, tries = 0; step < vocabulary_->size() && tries < 500; ++step) {
    std::vector<int> candidate = clean, back;
    candidate[at] = (original + step) % vocabulary_->size();
    if (std::find(clean.begin(), clean.end(), candidate[at]) != clean.end()) continue;
    ++tries;
    if (vocabulary_->encode(joinTokens(*vocabulary_, candidate).toStdString(), back, why) && back == candidate) {
      swapped = std::move(candidate);
      break;
    }
  }
  corrupt_->setText(joinTokens(*vocabulary_, swapped));
}

int CircuitsTab::pickedToken(const QComboBox* box) const { return box->currentIndex() - 1; }

void CircuitsTab::run() {
  PatchingRequest request;
  if (!checkPair(&request.clean, &request.corrupt).isEmpty()) return;
  request.answer = pickedToken(answer_);
  request.wrong = pickedToken(wrong_);
  parsePatchSite(site_->currentText().toStdString(), request.site);
  request.perPosition = perPosition_->isChecked();
  progress_->setValue(0);
  retrievalLast_ = false;
  status_->setText(tr("Patching..."));
  model_->run(attention_->snapshot()->model, std::move(request));
  run_->setEnabled(false);
}

QString CircuitsTab::runPair(const QString& clean, const QString& corrupt, const QString& site, const QString& answer,
                             const QString& wrong) {
  clean_->setText(clean);
  corrupt_->setText(corrupt);
  site_->setCurrentText(site);
  answer_->setCurrentIndex(answer.isEmpty() ? 0 : std::max(0, answer_->findText(answer)));
  wrong_->setCurrentIndex(wrong.isEmpty() ? 0 : std::max(0, wrong_->findText(wrong)));
  std::vector<int> a, b;
  const QString why = checkPair(&a, &b);
  if (why.isEmpty()) run();
  return why;
}

QWidget* CircuitsTab::retrievalPane() {
  auto* pane = new QWidget(this);
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* controls = new QHBoxLayout;
  retrievalRun_->setToolTip(tr("Per head, the share of answers whose strongest key holds the needle's token; then the answer accuracy "
                               "with heads knocked out. Lab runs: the task's validation sample; opened models: passkey prompts"));
  retrievalK_->setRange(0, 64);
  retrievalK_->setValue(2);
  retrievalK_->setToolTip(tr("Heads knocked out (the top k against k random ones) and RoPE pairs zeroed; 0 changes nothing"));
  controls->addWidget(retrievalRun_);
  controls->addWidget(new QLabel(tr("k"), pane));
  controls->addWidget(retrievalK_);
  controls->addStretch(1);
  layout->addLayout(controls);
  retrievalStatus_->setWordWrap(true);
  layout->addWidget(retrievalStatus_);
  retrieval_->setObjectName(QStringLiteral("retrievalScores"));
  retrieval_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  retrieval_->horizontalHeader()->setDefaultSectionSize(44);
  layout->addWidget(retrieval_, 1);
  return pane;
}

QString CircuitsTab::runRetrieval(int k) {
  const TraceSnapshot* snapshot = attention_->snapshot();
  if (!snapshot || !snapshot->model) return tr("No model yet.");
  const ModelConfig& c = snapshot->model->model->config();
  if (k > c.n_layers * c.n_heads) return tr("The model has %1 heads; k is %2.").arg(c.n_layers * c.n_heads).arg(k);
  retrievalLast_ = true;
  progress_->setValue(0);
  retrievalStatus_->setText(tr("Finding retrieval heads..."));
  model_->runRetrieval(snapshot->model, k);
  return {};
}

void CircuitsTab::showRetrieval() {
  const RetrievalResult* r = model_->retrieval();
  if (!r) return;
  const RetrievalStudy& s = r->study;
  const int layers = static_cast<int>(s.scores.size()), heads = layers ? static_cast<int>(s.scores[0].size()) : 0;
  retrieval_->clear();
  retrieval_->setRowCount(layers);
  retrieval_->setColumnCount(heads);
  QStringList rows, columns;
  for (int l = 0; l < layers; ++l) rows << layerLabel(l);
  for (int h = 0; h < heads; ++h) columns << headLabel(h);
  retrieval_->setVerticalHeaderLabels(rows);
  retrieval_->setHorizontalHeaderLabels(columns);
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) {
      auto* item = new QTableWidgetItem(QString::number(s.scores[l][h], 'f', 2));
      item->setBackground(probabilityColour(s.scores[l][h]));
      item->setForeground(Qt::black);
      const bool top = std::find(s.top.begin(), s.top.end(), std::make_pair(l, h)) != s.top.end();
      item->setToolTip(tr("%1: retrieval score %2%3").arg(headName(l, h)).arg(s.scores[l][h], 0, 'f', 3).arg(top ? tr(" (knocked out as a top head)") : QString()));
      retrieval_->setItem(l, h, item);
    }
  auto number = [](double v) { return std::isnan(v) ? tr("n/a") : QString::number(v, 'f', 3); };
  progress_->setValue(progress_->maximum());
  retrievalStatus_->setText(tr("On %1: answer accuracy %2; top %3 heads knocked out %4, %3 random heads %5; "
                               "their lowest RoPE pairs zeroed %6; Im -> 0 in every head %7.")
                                .arg(QString::fromStdString(r->sequences), number(s.accuracy))
                                .arg(r->k)
                                .arg(number(s.accuracy_top_masked), number(s.accuracy_random_masked), number(s.accuracy_rope_knockout),
                                     number(s.accuracy_phase_off)));
}

void CircuitsTab::settle() {
  followTrace();
  if (!model_->result() && !model_->busy()) {
    std::vector<int> clean;
    std::string why;
    if (vocabulary_ && vocabulary_->encode(clean_->text().toStdString(), clean, why) && clean.size() > 3) {
      if (corrupt_->text().isEmpty()) {  // the first 3/4 of the probe; swap where a repeat of half its length would copy from
        const int T = static_cast<int>(clean.size()), cut = 3 * T / 4;
        clean.resize(cut);
        clean_->setText(joinTokens(*vocabulary_, clean));
        swapPosition_->setValue(std::max(0, cut - (T + 1) / 2));
        swapToken();
      }
      site_->setCurrentText(QStringLiteral("head_out"));
      run();
    }
  }
  model_->job().waitForIdle();
  QApplication::processEvents();
  if (!model_->retrieval() && attention_->snapshot() && attention_->snapshot()->model) {  // after the sweep: a submit replaces a waiting job
    runRetrieval(retrievalK_->value());
    model_->job().waitForIdle();
    QApplication::processEvents();
  }
}

void CircuitsTab::showResults() {
  const CircuitsResult* r = model_->result();
  if (!r || !vocabulary_) return;
  const PatchingRequest& q = r->request;
  const bool heads = q.site == PatchSite::head_out || q.site == PatchSite::pattern || q.site == PatchSite::values;
  const int T = static_cast<int>(q.clean.size());
  int headCount = 0;
  for (const PatchEffect& e : r->patching.rows) headCount = std::max(headCount, e.head + 1);
  QStringList labels;
  auto token = [&](int t) { return QString::fromStdString(vocabulary_->token(q.clean[t])); };
  if (!heads)
    for (int t = 0; t < T; ++t) labels << token(t);
  else
    for (int h = 0; h < headCount; ++h)
      for (int t = 0; t < (q.perPosition ? T : 1); ++t) labels << (q.perPosition ? headLabel(h) + ' ' + token(t) : headLabel(h));
  progress_->setValue(progress_->maximum());
  QStringList rows;  // the stream sites add the stream after the last block
  for (int l = 0; l < (q.site == PatchSite::resid ? r->layers + 1 : r->layers); ++l) rows << (q.site == PatchSite::resid ? streamLabel(l) : layerLabel(l));
  map_->setEffects(r->patching.rows, rows, labels, q.perPosition ? T : 0);
  status_->setText(tr("Logit difference '%1' - '%2': clean %3, corrupted %4. %5 patches.")
                       .arg(QString::fromStdString(vocabulary_->token(r->patching.answer)),
                            QString::fromStdString(vocabulary_->token(r->patching.wrong)))
                       .arg(r->patching.clean_diff, 0, 'f', 2)
                       .arg(r->patching.corrupt_diff, 0, 'f', 2)
                       .arg(r->patching.rows.size()));
  showLens();
  showDla();
  showComposition();
}

void CircuitsTab::showComposition() {
  const CircuitsResult& r = *model_->result();
  const bool newModel = r.composition.get() != lastComposition_;
  graph_->setComposition(r.composition, r.layers, r.heads);
  if (!r.composition) {
    status_->setText(status_->text() + tr(" Composition: %1").arg(QString::fromStdString(r.composition_error)));
    return;
  }
  if (newModel) threshold_->setValue(graph_->thresholdForShare(0.1));  // a new model: its strongest tenth
  lastComposition_ = r.composition.get();
}

void CircuitsTab::showLens() {
  const CircuitsResult& r = *model_->result();
  const int T = static_cast<int>(r.request.clean.size());
  lens_->clear();
  lens_->setRowCount(r.layers + 1);
  lens_->setColumnCount(T);
  QStringList columns, rows;
  for (int t = 0; t < T; ++t) columns << QString::fromStdString(vocabulary_->token(r.request.clean[t]));
  for (int l = 0; l <= r.layers; ++l) rows << (l < r.layers ? streamLabel(l) : tr("final"));  // the rows' names, also in the tooltips
  lens_->setHorizontalHeaderLabels(columns);
  lens_->setVerticalHeaderLabels(rows);
  for (const LensCell& c : r.lens.cells) {
    auto* item = new QTableWidgetItem(QString::fromStdString(vocabulary_->token(c.top[0])));
    item->setBackground(probabilityColour(c.top_probs[0]));
    item->setForeground(Qt::black);
    QString tip = tr("%1, position %2\n").arg(rows[c.layer]).arg(c.position);
    for (size_t i = 0; i < c.top.size(); ++i)
      tip += tr("%1  %2\n").arg(QString::fromStdString(vocabulary_->token(c.top[i]))).arg(c.top_probs[i], 0, 'f', 3);
    tip += tr("answer '%1': rank %2, p %3").arg(QString::fromStdString(vocabulary_->token(c.token))).arg(c.rank).arg(c.prob, 0, 'f', 3);
    item->setToolTip(tip);
    lens_->setItem(c.layer, c.position, item);
  }
}

void CircuitsTab::showDla() {
  const CircuitsResult& r = *model_->result();
  // The 12 largest terms, largest at the top (a horizontal bar series draws its first bar lowest).
  std::vector<DlaTerm> terms = r.dla.terms;
  std::stable_sort(terms.begin(), terms.end(), [](const DlaTerm& a, const DlaTerm& b) { return std::abs(a.value) > std::abs(b.value); });
  if (terms.size() > 12) terms.resize(12);
  std::reverse(terms.begin(), terms.end());
  auto* set = new QBarSet(tr("direct effect on the logit"));
  QStringList names;
  for (const DlaTerm& t : terms) {
    *set << t.value;
    names << dlaTermLabel(t);
  }
  auto* series = new QHorizontalBarSeries;
  series->append(set);
  connect(set, &QBarSet::hovered, this, [this, terms](bool on, int index) {
    if (on && index >= 0 && index < static_cast<int>(terms.size()))
      QToolTip::showText(QCursor::pos(), QStringLiteral("%1: %2").arg(dlaTermLabel(terms[index])).arg(terms[index].value, 0, 'f', 3), dla_);
  });
  auto* chart = new QChart;
  chart->addSeries(series);
  auto* names_ = new QBarCategoryAxis;
  names_->append(names);
  QFont small = names_->labelsFont();  // 12 rows in a short pane: a smaller font keeps the names from eliding
  small.setPointSizeF(small.pointSizeF() * 0.85);
  names_->setLabelsFont(small);
  auto* values = new QValueAxis;
  chart->addAxis(names_, Qt::AlignLeft);
  chart->addAxis(values, Qt::AlignBottom);
  series->attachAxis(names_);
  series->attachAxis(values);
  chart->legend()->hide();
  chart->setTitle(tr("Direct logit attribution of '%1' (logit %2)")
                      .arg(QString::fromStdString(vocabulary_->token(r.dla.token)))
                      .arg(r.dla.logit, 0, 'f', 2));
  QChart* old = dla_->chart();
  dla_->setChart(chart);
  delete old;
}

bool CircuitsTab::hasExportData() const { return model_->result() != nullptr || model_->retrieval() != nullptr; }

void CircuitsTab::writeCsv(QTextStream& out) const {
  const CircuitsResult* r = model_->result();
  out << "kind,layer,head,position,name,value\n";
  if (const RetrievalResult* retrieval = model_->retrieval())
    for (size_t l = 0; l < retrieval->study.scores.size(); ++l)
      for (size_t h = 0; h < retrieval->study.scores[l].size(); ++h) out << "retrieval," << l << ',' << h << ",,," << retrieval->study.scores[l][h] << '\n';
  if (!r) return;
  for (const PatchEffect& e : r->patching.rows) out << "patch," << e.layer << ',' << e.head << ',' << e.position << ",," << e.effect << '\n';
  for (const DlaTerm& t : r->dla.terms)
    out << "dla," << t.layer << ',' << t.head << ",," << csvField(QString::fromStdString(t.name)) << ',' << t.value << '\n';
  for (const LensCell& c : r->lens.cells) out << "lens_answer_prob," << c.layer << ",," << c.position << ",," << c.prob << '\n';
  if (!r->composition) return;
  for (const CompositionScore& s : r->composition->pairs)  // layer, head: the later head; name: the earlier one
    for (auto [kind, value] : {std::pair<const char*, double>{"q", s.q}, {"k", s.k}, {"v", s.v}})
      out << "composition_" << kind << ',' << s.to_layer << ',' << s.to_head << ",,L" << s.from_layer << 'H' << s.from_head << ',' << value << '\n';
  for (size_t l = 0; l < r->composition->copying.size(); ++l)
    for (size_t h = 0; h < r->composition->copying[l].size(); ++h) out << "ov_copying," << l << ',' << h << ",,," << r->composition->copying[l][h] << '\n';
}

void CircuitsTab::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
