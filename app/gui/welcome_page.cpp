#include "welcome_page.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QVBoxLayout>

#include "experiment_files.h"
#include "io/config_json.h"
#include "main_window.h"
#include "tour_library.h"
#include "tour_panel.h"

namespace attnlab {

namespace {
constexpr int kPictureWidth = 220;  // a preset's picture on the page (the PNG is wider)

QLabel* wrapped(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  return label;
}

}  // namespace

WelcomePage::WelcomePage(MainWindow* window) : QDialog(window) {
  setObjectName(QStringLiteral("welcomePage"));
  setWindowTitle(tr("Welcome to Attention Lab"));
  auto* layout = new QVBoxLayout(this);
  auto* heading = new QLabel(tr("<h2>Welcome to Attention Lab</h2>"
                                "<p>Build a small Transformer, train it on this computer and watch its attention form, live. "
                                "Start with a guided tour, or open a preset and press <b>Train</b> (F5).</p>"),
                             this);
  heading->setWordWrap(true);
  layout->addWidget(heading);

  // Tours and presets scroll together, so neither is squeezed when the other list is long.
  auto* content = new QWidget(this);
  auto* contentLayout = new QVBoxLayout(content);
  contentLayout->setContentsMargins(0, 0, 0, 0);
  auto* tours = new QGroupBox(tr("Guided tours: lessons that run live experiments"), content);
  auto* tourGrid = new QGridLayout(tours);
  int row = 0;
  for (const Tour& tour : shippedTours().tours) {
    const QString name = QString::fromStdString(tour.name);
    auto* start = new QPushButton(QString::fromStdString(tour.title), tours);
    start->setObjectName(QStringLiteral("tour_") + name);
    connect(start, &QPushButton::clicked, this, [this, window, name] {
      accept();
      window->tourPanel()->startTour(name);
    });
    tourGrid->addWidget(start, row, 0);
    tourGrid->addWidget(wrapped(QStringLiteral("%1 <i>(%2)</i>").arg(QString::fromStdString(tour.summary).toHtmlEscaped(),
                                                                     QString::fromStdString(tour.duration).toHtmlEscaped()),
                                tours),
                        row++, 1);
  }
  tourGrid->setColumnStretch(1, 1);
  contentLayout->addWidget(tours);

  auto* presets = new QGroupBox(tr("Presets: experiments ready to train"), content);
  auto* presetGrid = new QGridLayout(presets);
  row = 0;
  for (const std::string& name : presetNames()) {
    ExperimentConfig config;
    if (!loadPreset(name, config).empty()) continue;
    auto* open = new QPushButton(QString::fromStdString(config.name), presets);
    open->setObjectName(QStringLiteral("preset_") + QString::fromStdString(name));
    connect(open, &QPushButton::clicked, this, [this, window, name] {
      accept();
      window->applyPreset(QString::fromStdString(name));
    });
    auto* cell = new QVBoxLayout;
    cell->addWidget(open);
    // What the preset shows, made by the app itself (scripts/make_preset_pictures.sh).
    const QPixmap picture(QStringLiteral(":/welcome/%1.png").arg(QString::fromStdString(name)));
    if (!picture.isNull()) {
      auto* shot = new QLabel(presets);
      shot->setObjectName(QStringLiteral("picture_") + QString::fromStdString(name));
      shot->setPixmap(picture.scaledToWidth(kPictureWidth, Qt::SmoothTransformation));
      shot->setToolTip(tr("Every head's attention on the probe after a short run of this preset, as the Model view shows it"));
      cell->addWidget(shot);
    }
    cell->addStretch();
    presetGrid->addLayout(cell, row / 2, (row % 2) * 2);
    presetGrid->addWidget(wrapped(QString::fromStdString(config.description), presets), row / 2, (row % 2) * 2 + 1);
    ++row;
  }
  presetGrid->setColumnStretch(1, 1);
  presetGrid->setColumnStretch(3, 1);
  auto* scroll = new QScrollArea(this);
  contentLayout->addWidget(presets);
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  layout->addWidget(scroll, 1);

  auto* files = new QHBoxLayout;
  auto* openExperiment = new QPushButton(tr("Open a saved experiment\u2026"), this);
  connect(openExperiment, &QPushButton::clicked, this, [this, window] {
    accept();
    window->files().openWithDialog();
  });
  auto* openModel = new QPushButton(tr("Open a model folder\u2026"), this);
  openModel->setObjectName(QStringLiteral("openModelFolder"));
  openModel->setToolTip(tr("A Hugging Face model folder (GPT-2, Llama, GPT-NeoX layouts) or one from the Hugging Face cache"));
  connect(openModel, &QPushButton::clicked, this, [this, window] {
    accept();
    window->openModelWithDialog();
  });
  files->addWidget(openExperiment);
  files->addWidget(openModel);
  files->addStretch(1);
  layout->addLayout(files);

  showAtStart_ = new QCheckBox(tr("Show this page at start"), this);
  showAtStart_->setChecked(wanted());
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(showAtStart_);
  bottom->addStretch(1);
  bottom->addWidget(buttons);
  layout->addLayout(bottom);
  showAtStart_->setChecked(false);  // closing dismisses it, unless ticked again
  resize(1100, 860);
}

bool WelcomePage::wanted() { return !QSettings().value(QLatin1String(kDismissedKey), false).toBool(); }

WelcomePage* WelcomePage::showFor(MainWindow* window) {
  auto* page = window->findChild<WelcomePage*>();
  if (!page) page = new WelcomePage(window);
  page->show();
  page->raise();
  return page;
}

void WelcomePage::done(int result) {
  QSettings().setValue(QLatin1String(kDismissedKey), !showAtStart_->isChecked());
  QDialog::done(result);
}

}  // namespace attnlab
