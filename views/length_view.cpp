#include "length_view.h"

#include <QContextMenuEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QVBoxLayout>

#include "attention_map_model.h"
#include "length_chart.h"
#include "length_sweep.h"
#include "training_session.h"
#include "training_view.h"

namespace attnlab {

namespace {

std::shared_ptr<const ModelSnapshot> latestModel(const AttentionMapModel* attention) {
  const TraceSnapshot* trace = attention ? attention->snapshot() : nullptr;
  return trace ? trace->model : nullptr;
}

}  // namespace

LengthView::LengthView(const ViewContext& context, QWidget* parent)
    : QWidget(parent),
      attention_(context.attention),
      session_(context.session),
      sweep_(context.lengths ? context.lengths : new LengthSweep(1, this)),
      run_(context.lengths ? context.run : 0),
      runs_(context.lengths ? context.lengths->runCount() : 1),
      multiples_(new QLineEdit(QStringLiteral("1, 2, 4, 8"), this)),
      evaluate_(new QPushButton(tr("Evaluate"), this)),
      status_(new QLabel(this)),
      chart_(new LengthChart(this)) {
  multiples_->setObjectName(QStringLiteral("lengthMultiples"));
  multiples_->setToolTip(tr("Multiples of the training length to evaluate at, increasing, e.g. 1, 2, 4, 8"));
  multiples_->setMaximumWidth(160);
  evaluate_->setToolTip(tr("Evaluate the run's latest weights on validation sequences of each length (on a worker thread)"));
  status_->setWordWrap(true);
  status_->setForegroundRole(QPalette::PlaceholderText);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Lengths (x training length)"), this));
  bar->addWidget(multiples_);
  bar->addWidget(evaluate_);
  bar->addWidget(status_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addLayout(bar);
  layout->addWidget(chart_, 1);
  if (context.compact) chart_->setMinimumSize(160, 200);

  connect(evaluate_, &QPushButton::clicked, this, &LengthView::evaluate);
  connect(multiples_, &QLineEdit::returnPressed, this, &LengthView::evaluate);
  connect(sweep_, &LengthSweep::curveChanged, this, [this](int run) {
    if (run == run_) showCurve();
  });
  connect(sweep_, &LengthSweep::busyChanged, this, [this](int run) {
    if (run == run_) showCurve();
  });
  if (attention_) connect(attention_, &AttentionMapModel::mapChanged, this, &LengthView::followTrace);
  if (session_) connect(session_, &TrainingSession::stateChanged, this, &LengthView::followTrace);
  showCurve();
}

bool LengthView::needsEvaluation() const {
  const auto model = latestModel(attention_);
  return model && (!sweep_->curve(run_).evaluated() || sweep_->curve(run_).step != model->step);
}

bool LengthView::evaluate() {
  std::vector<double> multiples;
  if (const QString why = parseLengthMultiples(multiples_->text(), multiples); !why.isEmpty()) {
    status_->setText(why);
    return false;
  }
  const auto model = latestModel(attention_);
  if (!model) {
    status_->setText(tr("no model yet: train a step or open a checkpoint"));
    return false;
  }
  sweep_->evaluate(run_, model, std::move(multiples));
  return true;
}

void LengthView::followTrace() {
  const bool training = session_ && session_->state() == TrainingSession::State::Running;
  if (isVisible() && !training && needsEvaluation()) evaluate();
}

void LengthView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  followTrace();
}

void LengthView::settle() {
  if (needsEvaluation()) evaluate();
  sweep_->waitForIdle();
  showCurve();
}

void LengthView::showCurve() {
  const LengthCurve& curve = sweep_->curve(run_);
  const auto model = latestModel(attention_);
  QString name = tr("run %1").arg(run_ + 1);
  if (model && model->run) name += QStringLiteral(": %1").arg(QString::fromStdString(model->run->config.model.positional));
  chart_->setLines({{name, seriesColour(run_, runs_), curve}});
  if (sweep_->busy(run_)) status_->setText(tr("evaluating\u2026"));
  else if (curve.evaluated())
    status_->setText(tr("at step %1, trained on %2 tokens; %3 validation sequences per length")
                         .arg(curve.step)
                         .arg(curve.trainedLength)
                         .arg(model && model->run ? model->run->config.train.eval_batches * model->run->config.train.batch : 0));
  else status_->clear();
}

QString LengthView::exportName() const { return QStringLiteral("lengths-step%1").arg(sweep_->curve(run_).step); }

bool LengthView::hasExportData() const { return chart_->hasExportData(); }

void LengthView::writeCsv(QTextStream& out) const { chart_->writeCsv(out); }

void LengthView::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  addExportActions(&menu, *this, this);
  menu.exec(event->globalPos());
}

}  // namespace attnlab
