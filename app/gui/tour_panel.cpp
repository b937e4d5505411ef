#include "tour_panel.h"

#include <QComboBox>
#include <QDesktopServices>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "main_window.h"
#include "study_reports.h"
#include "tour_library.h"

namespace attnlab {

namespace {

QString escaped(const QString& text) { return text.toHtmlEscaped(); }

// One step as Markdown: its text, then the question's answer once its experiment ran.
QString stepMarkdown(const TourStep& step, const TourRunner::StepResult& r) {
  QString md = QStringLiteral("### %1\n\n").arg(QString::fromStdString(step.title));
  if (!r.done && r.problem.isEmpty()) {
    // Before its numbers come in, the text shows its placeholders as "…", not as stale numbers.
    md += QString::fromStdString(step.text.render({})).replace(QStringLiteral("n/a"), QStringLiteral("\u2026"));
  } else {
    md += r.text;
  }
  if (!step.question.empty()) {
    md += QStringLiteral("\n\n**Predict first:** %1\n").arg(QString::fromStdString(step.question));
    if (r.done) {
      md += QStringLiteral("\n");
      for (size_t i = 0; i < step.choices.size(); ++i) {
        const bool right = int(i) + 1 == step.answer, mine = int(i) + 1 == r.predicted;
        md += QStringLiteral("- %1%2%3\n")
                  .arg(right ? QStringLiteral("**") : QString(), QString::fromStdString(step.choices[i]), right ? QStringLiteral("** (the answer)") : QString());
        if (mine) md += QStringLiteral("  *your prediction*\n");
      }
      if (!r.reveal.isEmpty()) md += QStringLiteral("\n%1\n").arg(r.reveal);
    }
  }
  return md;
}

}  // namespace

TourPanel::TourPanel(MainWindow* window) : QDockWidget(tr("Tour"), window), window_(window), runner_(new TourRunner(window, this)) {
  setObjectName(QStringLiteral("tourDock"));
  auto* body = new QWidget(this);
  auto* layout = new QVBoxLayout(body);
  title_ = new QLabel(body);
  title_->setWordWrap(true);
  QFont titleFont = title_->font();
  titleFont.setBold(true);
  titleFont.setPointSizeF(titleFont.pointSizeF() * 1.2);
  title_->setFont(titleFont);
  progress_ = new QProgressBar(body);
  progress_->setTextVisible(true);
  contents_ = new QComboBox(body);
  contents_->setToolTip(tr("Table of contents: go back to a step, or run the tour up to a later one"));
  connect(contents_, &QComboBox::activated, runner_, &TourRunner::goTo);
  text_ = new QTextBrowser(body);
  basePointSize_ = text_->font().pointSizeF();
  // report:NAME opens that study's report (the tours cite the studies that measured their claim).
  text_->setOpenLinks(false);
  connect(text_, &QTextBrowser::anchorClicked, this, [this](const QUrl& link) {
    if (link.scheme() == QLatin1String("report")) openNamedStudyReport(window_, link.path());
    else if (!link.isRelative()) QDesktopServices::openUrl(link);
  });
  choices_ = new QWidget(body);
  choicesLayout_ = new QVBoxLayout(choices_);
  choicesLayout_->setContentsMargins(0, 0, 0, 0);
  status_ = new QLabel(body);
  status_->setWordWrap(true);
  checks_ = new QLabel(body);
  checks_->setWordWrap(true);
  checks_->setTextFormat(Qt::RichText);
  back_ = new QPushButton(tr("\u2190 Back"), body);
  next_ = new QPushButton(tr("Next \u2192"), body);
  restart_ = new QPushButton(tr("Restart"), body);
  back_->setToolTip(tr("The previous step, as it came out (Left)"));
  next_->setToolTip(tr("The next step: runs its experiment (Space or Right)"));
  restart_->setToolTip(tr("Start the tour again from its first step"));
  connect(back_, &QPushButton::clicked, runner_, &TourRunner::back);
  connect(next_, &QPushButton::clicked, runner_, &TourRunner::next);
  connect(restart_, &QPushButton::clicked, runner_, &TourRunner::restart);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(back_);
  buttons->addWidget(next_, 1);
  buttons->addWidget(restart_);
  layout->addWidget(title_);
  layout->addWidget(progress_);
  layout->addWidget(contents_);
  layout->addWidget(text_, 1);
  layout->addWidget(choices_);
  layout->addWidget(status_);
  layout->addWidget(checks_);
  layout->addLayout(buttons);
  setWidget(body);

  // Window-wide keys while a tour runs; text fields still take Space and the arrows as they type.
  for (const auto& [key, forward] : {std::pair{Qt::Key_Space, true}, {Qt::Key_Right, true}, {Qt::Key_Left, false}}) {
    auto* shortcut = new QShortcut(QKeySequence(key), window);
    connect(shortcut, &QShortcut::activated, this, [this, forward] {
      if (!runner_->active() || !isVisible()) return;
      forward ? runner_->next() : runner_->back();
    });
  }
  // 1-9 pick a choice of the question waiting for a prediction.
  for (int n = 1; n <= 9; ++n) {
    auto* shortcut = new QShortcut(QKeySequence(Qt::Key_0 + n), window);
    connect(shortcut, &QShortcut::activated, this, [this, n] {
      if (runner_->waitingForPrediction() && n <= int(runner_->tour().steps[runner_->current()].choices.size())) runner_->predict(n);
    });
  }
  connect(runner_, &TourRunner::changed, this, &TourPanel::refresh);
  refresh();
}

bool TourPanel::startTour(const QString& name) {
  const Tour* tour = shippedTours().find(name);
  if (!tour) return false;
  startTour(*tour);
  return true;
}

void TourPanel::startTour(const Tour& tour) {
  show();
  raise();
  choicesFor_ = -1;
  runner_->start(tour);
}

void TourPanel::fillMenu(QMenu* menu) {
  menu->clear();
  menu->setToolTipsVisible(true);
  const TourLibrary& library = shippedTours();
  for (const Tour& tour : library.tours) {
    const QString name = QString::fromStdString(tour.name);
    QAction* action = menu->addAction(QString::fromStdString(tour.title), this, [this, name] { startTour(name); });
    action->setToolTip(QStringLiteral("%1 (%2)").arg(QString::fromStdString(tour.summary), QString::fromStdString(tour.duration)));
  }
  if (!library.errors.isEmpty()) {
    menu->addSeparator();
    QAction* note = menu->addAction(tr("%n tour file(s) could not be read", nullptr, library.errors.size()));
    note->setToolTip(library.errors.join(QLatin1Char('\n')));
    note->setEnabled(false);
  }
}

void TourPanel::setTextScale(double scale) {
  textScale_ = scale;
  QFont font = text_->font();
  font.setPointSizeF(basePointSize_ * scale);
  text_->setFont(font);
  refresh();
}

void TourPanel::refresh() {
  const bool active = runner_->active();
  back_->setEnabled(runner_->canGoBack());
  next_->setEnabled(runner_->canGoNext());
  restart_->setEnabled(active && !runner_->busy());
  contents_->setEnabled(active && !runner_->busy());
  if (!active) {
    title_->setText(tr("No tour is running"));
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(QString());
    contents_->clear();
    text_->setMarkdown(tr("Pick a tour under **Help \u25b8 Tours**. Each runs live experiments in this window, step by step."));
    status_->clear();
    checks_->clear();
    choices_->hide();
    return;
  }
  const Tour& tour = runner_->tour();
  const int step = runner_->current();
  const int count = int(tour.steps.size());
  title_->setText(QString::fromStdString(tour.title));
  progress_->setRange(0, count);
  progress_->setValue(step + 1);
  progress_->setFormat(tr("step %1 of %2").arg(step + 1).arg(count));
  if (contents_->count() != count) {
    contents_->clear();
    for (int i = 0; i < count; ++i) contents_->addItem(tr("%1. %2").arg(i + 1).arg(QString::fromStdString(tour.steps[i].title)));
  }
  contents_->setCurrentIndex(step);
  const TourRunner::StepResult& r = runner_->result(step);
  text_->setMarkdown(stepMarkdown(tour.steps[step], r));
  rebuildChoices();
  status_->setText(runner_->status().isEmpty() ? QString() : QStringLiteral("<i>%1</i>").arg(escaped(runner_->status())));
  QStringList lines;
  if (!r.problem.isEmpty()) lines << QStringLiteral("<span style='color:#b00020'><b>This step could not run:</b> %1</span>").arg(escaped(r.problem));
  for (const TourRunner::CheckResult& c : r.checks) {
    const QString text = c.text.isEmpty() ? (c.held ? tr("The check held.") : tr("The check did not hold in this run.")) : c.text;
    lines << (c.held ? QStringLiteral("<span style='color:#1b7a1b'><b>\u2713</b> %1</span>") : QStringLiteral("<span style='color:#b00020'><b>\u2717</b> %1</span>"))
                 .arg(escaped(text));
  }
  checks_->setText(lines.join(QStringLiteral("<br>")));
  checks_->setVisible(!lines.isEmpty());
}

// The question's choices as buttons while the step waits for a prediction.
void TourPanel::rebuildChoices() {
  const bool waiting = runner_->waitingForPrediction();
  choices_->setVisible(waiting);
  if (!waiting || choicesFor_ == runner_->current()) return;
  choicesFor_ = runner_->current();
  while (QLayoutItem* item = choicesLayout_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  const TourStep& step = runner_->tour().steps[runner_->current()];
  for (size_t i = 0; i < step.choices.size(); ++i) {
    auto* button = new QPushButton(QStringLiteral("%1. %2").arg(i + 1).arg(QString::fromStdString(step.choices[i])), choices_);
    button->setStyleSheet(QStringLiteral("text-align: left; padding: 4px"));
    connect(button, &QPushButton::clicked, runner_, [this, i] { runner_->predict(int(i) + 1); });
    choicesLayout_->addWidget(button);
  }
  auto* skip = new QPushButton(tr("Run it without predicting"), choices_);
  skip->setFlat(true);
  connect(skip, &QPushButton::clicked, runner_, [this] { runner_->predict(0); });
  choicesLayout_->addWidget(skip);
}

}  // namespace attnlab
