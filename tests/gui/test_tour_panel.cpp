// Tours in the real window: shipped tours all load; a malformed file is refused with its file,
// line and reason while the others load; the runner drives the window (preset, --set, training to
// a step, selection, view, callout), waits for a prediction before the experiment and reveals the
// answer after, fills the text with the run's numbers, reports a failing check as failing; Back
// shows a step as it came out, Next and the table of contents run what was not run yet.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "io/config_json.h"
#include "launch_options.h"
#include "main_window.h"
#include "tour_callout.h"
#include "tour_library.h"
#include "presenter_mode.h"
#include "tour_panel.h"
#include "view_kind.h"
#include "welcome_page.h"

using namespace attnlab;

namespace {

const char* kTinyTour =
    "# Tiny\n"
    "@summary A tour of a tiny model.\n"
    "## Train a little\n"
    "Trained to step {step}; the model has {n_layers} layers.\n"
    "@preset default\n"
    "@set model.d_model=32\n"
    "@set model.n_layers=2\n"
    "@set model.n_heads=2\n"
    "@set model.d_ff=64\n"
    "@set model.context=24\n"
    "@set train.batch=4\n"
    "@train 4\n"
    "@select 2 1\n"
    "@view attention\n"
    "@highlight heatmap Look here\n"
    "@check step == 4\n"
    "@pass At step {step}.\n"
    "@check n_layers == 3\n"
    "@pass Three layers.\n"
    "@fail In this run the model has {n_layers} layers, not 3.\n"
    "## Predict\n"
    "Layer {layer} head {head}.\n"
    "@predict How many steps will it be at?\n"
    "@choice 4\n"
    "@choice 8\n"
    "@answer 2\n"
    "@reveal It is at step {step}.\n"
    "@train 8\n"
    "@check step == 8\n"
    "## Last\n"
    "Row sum {row_sum(L,H,last):.3f}.\n"
    "@train 10\n";

bool writeFile(const QString& path, const QByteArray& text) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

}  // namespace

class TourPanelTest : public QObject {
  Q_OBJECT
 private slots:
  void shippedToursAllLoad() {
    const TourLibrary& library = shippedTours();
    QVERIFY2(library.errors.isEmpty(), qPrintable(library.errors.join('\n')));
    QVERIFY(library.tours.size() >= 3);
    for (const Tour& t : library.tours) QVERIFY(!t.summary.empty() && !t.duration.empty() && !t.steps.empty());
    QVERIFY(library.find(QStringLiteral("induction_heads")));
  }

  void aMalformedTourIsRefusedAndTheRestLoad() {
    QTemporaryDir dir;
    QVERIFY(writeFile(dir.filePath("good.tour"), kTinyTour));
    QVERIFY(writeFile(dir.filePath("bad.tour"), "# Bad\n@summary s\n## Step\n@train-until 300 induction(2,1) >\n"));
    QVERIFY(writeFile(dir.filePath("notes.txt"), "not a tour"));
    const TourLibrary library = loadTours(dir.path());
    QCOMPARE(library.tours.size(), size_t(1));
    QCOMPARE(QString::fromStdString(library.tours[0].name), QStringLiteral("good"));
    QCOMPARE(library.errors, QStringList{QStringLiteral("bad.tour:4: in the condition: at column 17: expected a number or a name")});
  }

  void commandLine() {
    LaunchOptions options;
    QCOMPARE(parseLaunchOptions({"attnlab", "--check"}, options), QStringLiteral("--check goes with --tour NAME"));
    QCOMPARE(parseLaunchOptions({"attnlab", "--tour", "nosuch"}, options), QStringLiteral("unknown tour 'nosuch' (attnlab --tours lists them)"));
    QCOMPARE(parseLaunchOptions({"attnlab", "--tour", "one_head", "--screenshots", "d"}, options),
             QStringLiteral("--screenshots DIR goes with --tour NAME --check"));
    LaunchOptions good;
    QCOMPARE(parseLaunchOptions({"attnlab", "--tour", "one_head", "--check", "--screenshots", "d"}, good), QString());
    QVERIFY(good.tourCheck);
    QCOMPARE(good.tourScreenshots, QStringLiteral("d"));
  }

  void runsATourInTheWindow() {
    Tour tour;
    QCOMPARE(QString::fromStdString(parseTour(kTinyTour, "tiny", "tiny.tour", tour)), QString());
    ExperimentConfig config;
    QVERIFY(loadPreset("default", config).empty());
    MainWindow window(config, QStringLiteral("default"));
    window.show();
    TourPanel* panel = window.tourPanel();
    TourRunner* runner = panel->runner();
    panel->show();
    runner->start(tour);
    QVERIFY(runner->busy());
    QVERIFY(!panel->nextButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(runner->result(0).done, 60000);

    // Step 1: the experiment was built from the preset and the --set lines, trained to step 4,
    // layer 2 head 1 selected, the attention view shown, the heatmap pointed at.
    QCOMPARE(window.config().model.d_model, 32);
    QCOMPARE(window.session().state(), TrainingSession::State::Paused);
    QCOMPARE(window.attentionMap().step(), 4);
    QCOMPARE(window.selection().layer(), 1);
    QCOMPARE(window.selection().head(), 0);
    QCOMPARE(window.currentView(), viewKindIndex("attention"));
    auto* callout = window.findChild<TourCallout*>();
    QVERIFY(callout && callout->isVisible());
    QCOMPARE(callout->target(), static_cast<QWidget*>(window.view<AttentionHeatmapView>()));
    const TourRunner::StepResult& first = runner->result(0);
    QCOMPARE(first.text, QStringLiteral("Trained to step 4; the model has 2 layers."));
    QVERIFY(panel->textBrowser()->toPlainText().contains(QStringLiteral("Trained to step 4; the model has 2 layers.")));
    QCOMPARE(first.checks.size(), size_t(2));
    QVERIFY(first.checks[0].held);
    QCOMPARE(first.checks[0].text, QStringLiteral("At step 4."));
    QVERIFY(!first.checks[1].held);  // a failing check says so, with the run's number
    QCOMPARE(first.checks[1].text, QStringLiteral("In this run the model has 2 layers, not 3."));
    QVERIFY(!first.allHeld());
    QVERIFY(panel->checksLabel()->text().contains(QStringLiteral("not 3")));

    // Step 2 waits for a prediction: nothing trains until a choice is made.
    QVERIFY(panel->nextButton()->isEnabled());
    window.activateWindow();  // window shortcuts need the window active (on an X server too)
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_Space);
    QCOMPARE(runner->current(), 1);
    QVERIFY(runner->waitingForPrediction());
    QVERIFY(panel->choicesBox()->isVisible());
    QTest::qWait(300);
    QCOMPARE(window.attentionMap().step(), 4);
    QVERIFY(!panel->textBrowser()->toPlainText().contains(QStringLiteral("It is at step")));  // no answer before the experiment
    const QList<QPushButton*> choices = panel->choicesBox()->findChildren<QPushButton*>();
    QCOMPARE(choices.size(), 3);  // two choices and "run without predicting"
    choices[1]->click();
    QTRY_VERIFY_WITH_TIMEOUT(runner->result(1).done, 60000);
    QCOMPARE(runner->result(1).predicted, 2);
    QCOMPARE(runner->result(1).reveal, QStringLiteral("It is at step 8."));
    QVERIFY(runner->result(1).allHeld());
    const QString shown = panel->textBrowser()->toPlainText();
    QVERIFY2(shown.contains(QStringLiteral("(the answer)")) && shown.contains(QStringLiteral("your prediction")), qPrintable(shown));
    QVERIFY(!panel->choicesBox()->isVisible());
    QVERIFY(!callout->isVisible());  // the callout belongs to the step that set it

    // Back shows step 1 as it came out, without running anything again.
    QTest::keyClick(&window, Qt::Key_Left);
    QCOMPARE(runner->current(), 0);
    QCOMPARE(runner->result(0).text, first.text);
    QCOMPARE(window.attentionMap().step(), 8);
    // The table of contents: the last step runs (step 2 is already run, so it is not run again).
    panel->contents()->activated(2);
    QTRY_VERIFY_WITH_TIMEOUT(runner->result(2).done, 60000);
    QCOMPARE(runner->current(), 2);
    QCOMPARE(window.attentionMap().step(), 10);
    QCOMPARE(runner->result(2).text, QStringLiteral("Row sum 1.000."));
    QVERIFY(!panel->nextButton()->isEnabled());

    // Restart runs step 1 again: a new experiment, discarded without asking since the tour trained it.
    runner->restart();
    QTRY_VERIFY_WITH_TIMEOUT(runner->result(0).done, 60000);
    QCOMPARE(window.attentionMap().step(), 4);
  }

  // First start: the page offers every tour and preset; closing it is remembered; a tour button starts the tour.
  void welcomePage() {
    QVERIFY(WelcomePage::wanted());
    ExperimentConfig config;
    QVERIFY(loadPreset("default", config).empty());
    MainWindow window(config, QStringLiteral("default"));
    WelcomePage* page = WelcomePage::showFor(&window);
    QVERIFY(page->isVisible());
    QCOMPARE(WelcomePage::showFor(&window), page);  // one per window
    QCOMPARE(int(page->findChildren<QPushButton*>(QRegularExpression("^tour_")).size()), int(shippedTours().tours.size()));
    QCOMPARE(int(page->findChildren<QPushButton*>(QRegularExpression("^preset_")).size()), int(presetNames().size()));
    // Each preset's picture (scripts/make_preset_pictures.sh), as the app's own Model view drew it.
    for (const std::string& name : presetNames()) {
      const QLabel* picture = page->findChild<QLabel*>(QStringLiteral("picture_") + QString::fromStdString(name));
      QVERIFY2(picture && !picture->pixmap().isNull(), name.c_str());
    }
    QVERIFY(page->findChild<QPushButton*>(QStringLiteral("openModelFolder"))->isEnabled());  // File > Open Model
    page->reject();
    QVERIFY(!WelcomePage::wanted());
    page = WelcomePage::showFor(&window);  // from Help, it still opens
    page->findChild<QPushButton*>(QStringLiteral("tour_heads_matter"))->click();
    QVERIFY(!page->isVisible());
    QVERIFY(window.tourPanel()->runner()->active());
    QCOMPARE(QString::fromStdString(window.tourPanel()->runner()->tour().name), QStringLiteral("heads_matter"));
    window.tourPanel()->runner()->stop();
  }

  void presenterMode() {
    ExperimentConfig config;
    QVERIFY(loadPreset("default", config).empty());
    MainWindow window(config, QStringLiteral("default"));
    window.show();
    const QFont before = QApplication::font();
    const QColor windowColour = QApplication::palette().color(QPalette::Window);
    auto* mode = window.findChild<PresenterMode*>();
    QVERIFY(mode);
    QAction* toggle = window.findChild<QAction*>(QStringLiteral("presenterMode"));
    QVERIFY(toggle && toggle->shortcut() == QKeySequence(Qt::Key_F11));
    toggle->trigger();
    QVERIFY(mode->isOn());
    QVERIFY(window.isFullScreen() || QGuiApplication::platformName() == QLatin1String("offscreen"));
    QCOMPARE(QApplication::font().pointSizeF(), before.pointSizeF() * 1.75);
    QCOMPARE(QApplication::palette().color(QPalette::Window), QColor(Qt::black));
    QVERIFY(window.tourPanel()->isVisible());
    QCOMPARE(window.tourPanel()->textBrowser()->font().pointSizeF(), before.pointSizeF() * 1.75 * 1.25);
    QVERIFY(window.view<AttentionHeatmapView>()->valuesShown());  // weights as text, not only on hover
    mode->setScalePercent(200);
    QCOMPARE(QApplication::font().pointSizeF(), before.pointSizeF() * 2);
    toggle->trigger();
    QVERIFY(!mode->isOn());
    QCOMPARE(QApplication::font().pointSizeF(), before.pointSizeF());
    QCOMPARE(QApplication::palette().color(QPalette::Window), windowColour);
    QVERIFY(!window.view<AttentionHeatmapView>()->valuesShown());
  }

  void aStepThatCannotRunSaysWhy() {
    Tour tour;
    QVERIFY(parseTour("# T\n@summary s\n## Select first\n@select 1 1\n", "t", "t.tour", tour).empty());
    ExperimentConfig config;
    QVERIFY(loadPreset("default", config).empty());
    MainWindow window(config, QStringLiteral("default"));
    TourRunner* runner = window.tourPanel()->runner();
    runner->start(tour);
    QTRY_VERIFY(!runner->result(0).problem.isEmpty());
    QCOMPARE(runner->result(0).problem, QStringLiteral("line 4: there is no layer 1 head 1 to select (train first?)"));
    QVERIFY(!runner->result(0).allHeld());
  }
};

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QTemporaryDir settings;
  QStandardPaths::setTestModeEnabled(true);
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("attnlab-test"));
  QApplication::setApplicationName(QStringLiteral("test_tour_panel"));
  TourPanelTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_tour_panel.moc"
