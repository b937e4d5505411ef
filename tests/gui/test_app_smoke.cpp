// The desktop app end to end: the window trains on its worker thread while the UI thread stays
// responsive, pause/resume/reset do what they say, bad configurations fail with a message, and
// build/bin/attnlab --screenshot produces a picture that is not blank.
#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QProcess>
#include <QSurfaceFormat>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <QDir>
#include <QLineEdit>
#include <QPushButton>
#include <QTabBar>
#include <QTextBlock>
#include <QTextBrowser>

#include "../cli_support.h"
#include "attention_heatmap_view.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "embedding_tab.h"
#include "qk_embedding_model.h"
#include "qk_embedding_panel.h"
#include "qk_embedding_view.h"
#include "spectra_tab.h"
#include "spectrum_history.h"
#include "spectrum_model.h"
#include "io/config_json.h"
#include "loss_history_model.h"
#include "main_window.h"
#include "probe_editor.h"
#include "training_session.h"
#include "view_kind.h"
#include "view_export.h"

using namespace attnlab;
using State = TrainingSession::State;

namespace {

// How late the UI thread may answer a 10 ms timer while training runs and the user switches views
// and types a probe every 0.4 s: 99 of 100 answers within 250 ms, none later than half a second.
// Measured on 2 shared cores: p99 60 ms at a load of ~3, 140-200 ms at a load of 15-20 (other
// builds and tests competing with the UI thread itself); the bound holds with margin for CI.
constexpr qint64 kWorstTimerGapMs = 500;
constexpr qint64 kP99TimerGapMs = 250;

// The default preset made small, so a few steps take well under a second.
const QStringList kTinyOverrides = {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64",
                                    "model.context=24", "train.batch=4",    "train.eval_every=10"};

ExperimentConfig defaultPreset(const QStringList& overrides = {}) {
  ExperimentConfig config;
  const std::string error = loadPreset("default", config);
  if (!error.empty()) qFatal("default preset: %s", error.c_str());
  for (const QString& o : overrides) {
    const std::string why = applyOverride(config, o.toStdString());
    if (!why.empty()) qFatal("override %s: %s", qPrintable(o), why.c_str());
  }
  return config;
}

int stepsDone(const MainWindow& window) {
  const auto& points = window.lossHistory().points();
  return points.empty() ? 0 : points.back().step;
}

// Distinct colours that are clearly not grey: the heatmap and chart lines have them, an empty
// window of widgets and text does not.
int distinctSaturatedColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QRgb c = image.pixel(x, y);
      const int spread = std::max({qRed(c), qGreen(c), qBlue(c)}) - std::min({qRed(c), qGreen(c), qBlue(c)});
      if (spread > 40) colours.insert(c);
    }
  return colours.size();
}


// The 3D picture turns with the camera; coloured by role with the last query's lines drawn, it
// is the picture the guide describes.
void checkEmbeddingPicture(MainWindow& window, QkEmbeddingView* view3d, const QDir& shots) {
  const QImage before = view3d->grabFramebuffer();
  view3d->rotateCamera(60, 20);
  const QImage turned = view3d->grabFramebuffer();
  int changed = 0;
  for (int y = 0; y < before.height(); ++y)
    for (int x = 0; x < before.width(); ++x) changed += before.pixel(x, y) != turned.pixel(x, y);
  QVERIFY2(changed > 1000, qPrintable(QStringLiteral("only %1 pixels changed after turning the camera").arg(changed)));
  QkEmbeddingModel* embeddingModel = window.view<EmbeddingTab>()->model();
  embeddingModel->setColorBy(QkEmbeddingModel::ColorBy::Role);
  embeddingModel->selectQuery(embeddingModel->count(QkEmbeddingModel::Kind::Query) - 1);
  QVERIFY(!embeddingModel->selectedLines().empty());
  QVERIFY(!embeddingModel->categories().isEmpty());
  QTest::qWait(100);
  QCOMPARE(exportView(*window.exportable(viewKindIndex("embedding")), ExportFormat::Png,
                      shots.filePath(QStringLiteral("embedding-roles.png"))),
           QString());
}

}  // namespace

class AppSmokeTest : public QObject {
  Q_OBJECT
 private slots:
  void trainsWhileTheWindowStaysResponsive() {
    // The real default preset, so steps cost what they cost for a user.
    ExperimentConfig config = defaultPreset();
    config.train.steps = 100000;
    MainWindow window(config, QStringLiteral("default"));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    window.startTraining();
    QCOMPARE(window.session().state(), State::Running);
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(window) >= 1 && window.attentionMap().hasMap(), 300000);

    QElapsedTimer sinceTick;
    std::vector<qint64> gaps;
    QTimer timer;
    timer.setTimerType(Qt::PreciseTimer);
    connect(&timer, &QTimer::timeout, [&] { gaps.push_back(sinceTick.restart()); });
    // Meanwhile the user flips through the views and edits the probe, as a person would.
    int flips = 0;
    QTimer user;
    connect(&user, &QTimer::timeout, [&] {
      // Every view but the 3D one: showing it first makes the window compose through OpenGL,
      // which on Xvfb's software OpenGL stalls the UI once for 0.3-0.5 s (measured at a load of 8).
      QStringList ids = viewKindIds();
      ids.removeOne(QStringLiteral("embedding"));
      window.showView(ids[++flips % ids.size()]);
      window.probeEditor()->submit(flips % 2 ? QStringLiteral("the") : QStringLiteral("the dog"));
    });
    const int stepsBefore = stepsDone(window);
    sinceTick.start();
    timer.start(10);
    user.start(400);
    QTest::qWait(3000);
    // A loaded machine may take longer than the 3 s window for one default-preset step.
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(window) > stepsBefore, 120000);
    timer.stop();
    user.stop();
    std::sort(gaps.begin(), gaps.end());
    QVERIFY(gaps.size() > 100);
    const qint64 worstGap = gaps.back();
    const qint64 p99 = gaps[gaps.size() * 99 / 100];
    qInfo("while training: %d timer ticks, p99 gap %lld ms, worst %lld ms, %d view switches, %d steps done",
          int(gaps.size()), p99, worstGap, flips, stepsDone(window) - stepsBefore);
    QVERIFY2(p99 < kP99TimerGapMs, qPrintable(QStringLiteral("p99 timer gap %1 ms").arg(p99)));
    QVERIFY2(worstGap < kWorstTimerGapMs, qPrintable(QStringLiteral("UI thread blocked for %1 ms").arg(worstGap)));
    QVERIFY(stepsDone(window) > stepsBefore);
    QVERIFY(window.attentionMap().step() > 0);  // the map followed training

    window.session().setHeadGains({{1, 1}, {1, 0}});  // a head switched off in the views
    window.session().reset();
    QCOMPARE(window.session().state(), State::Idle);
    QCOMPARE(window.lossHistory().rowCount(), 0);
    QVERIFY(!window.attentionMap().hasMap());
    QVERIFY(window.session().headGains().empty());  // the next experiment starts with every head on
  }

  void everyViewShowsTheTrainingRun() {
    ExperimentConfig config = defaultPreset(kTinyOverrides);
    config.train.steps = 1000;
    MainWindow window(config, QStringLiteral("default"));
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.session().setPauseAtStep(12);
    window.startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), State::Paused, 300000);
    QTRY_COMPARE_WITH_TIMEOUT(window.attentionMap().step(), 12, 10000);

    // A typed probe reaches the worker and comes back traced.
    ProbeEditor* probe = window.probeEditor();
    window.showView(QStringLiteral("attention"));
    probe->field()->clear();
    QTest::keyClicks(probe->field(), QStringLiteral("the dog"));
    QVERIFY2(probe->message().isEmpty(), qPrintable(probe->message()));
    QTRY_COMPARE_WITH_TIMEOUT(window.selection().shown().size(), 2, 10000);
    QTest::keyClicks(probe->field(), QStringLiteral(" qqqzzz"));
    QVERIFY2(probe->message().contains(QStringLiteral("qqqzzz")), qPrintable(probe->message()));
    QTest::mouseClick(probe->findChild<QPushButton*>(), Qt::LeftButton);  // Draw example
    QTRY_VERIFY_WITH_TIMEOUT(window.selection().shown().size() > 8, 10000);

    // Screenshots of every view, made by the views' own export, none of them blank.
    const QDir shots(QDir::current().filePath(QStringLiteral("smoke-screenshots")));
    QVERIFY(shots.mkpath(QStringLiteral(".")));
    // Every registered kind, so a new view is checked the moment it has its row.
    const QStringList names = viewKindIds();
    for (int v = 0; v < names.size(); ++v) {
      const int view = v;
      window.showView(view);
      QCOMPARE(window.tabs()->currentIndex(), v);
      QTest::qWait(100);  // layouts settle
      window.settleView(view);
      const QString file = shots.filePath(names[v] + QStringLiteral(".png"));
      QVERIFY2(window.exportable(view), qPrintable(names[v] + QStringLiteral(" has no export")));
      QCOMPARE(exportView(*window.exportable(view), ExportFormat::Png, file), QString());
      const QImage image = QImage(file).convertToFormat(QImage::Format_RGB32);
      QVERIFY2(!image.isNull() && image.width() > 300 && image.height() > 200, qPrintable(file));
      const int colours = distinctSaturatedColours(image);
      qInfo("%s: %dx%d, %d distinct saturated colours", qPrintable(names[v]), image.width(), image.height(), colours);
      if (names[v] == QLatin1String("embedding") && !window.view<EmbeddingTab>()->panel()) {
        qInfo("no OpenGL on this display (offscreen): the 3D view says so instead");
        continue;
      }
      QVERIFY2(colours >= 8, qPrintable(QStringLiteral("%1 looks blank (%2 colours)").arg(names[v]).arg(colours)));
    }

    // The spectra follow the run (one frame per traced step) and the shared selection; the
    // embedding has a query and a key per probe token, and its picture turns with the camera.
    window.selection().select(1, 1);
    window.showView(QStringLiteral("spectra"));
    window.settleView(viewKindIndex("spectra"));
    const SpectrumModel& spectra = *window.view<SpectraTab>()->model();
    QVERIFY(spectra.hasData());
    QCOMPARE(spectra.step(), 12);
    QVERIFY(spectra.snapshotCount() >= 1 && spectra.snapshotCount() <= SpectrumHistory::kMaxFrames);
    QCOMPARE(spectra.selectedLayer(), 1);
    QCOMPARE(spectra.selectedHead(), 1);
    QVERIFY(!spectra.eigenvaluePoints(1).isEmpty());
    window.showView(QStringLiteral("embedding"));
    window.settleView(viewKindIndex("embedding"));
    const QkEmbeddingModel& embedding = *window.view<EmbeddingTab>()->model();
    QCOMPARE(embedding.count(QkEmbeddingModel::Kind::Query), window.selection().shown().size());
    QCOMPARE(embedding.count(QkEmbeddingModel::Kind::Key), window.selection().shown().size());
    QCOMPARE(embedding.data()->layer, 1);
    QCOMPARE(embedding.data()->head, 1);
    if (QkEmbeddingPanel* panel = window.view<EmbeddingTab>()->panel()) {
      checkEmbeddingPicture(window, panel->view(), shots);
      if (QTest::currentTestFailed()) return;
    }
    window.selection().select(0, 0);

    // The heatmap's pixels at two known cells differ as their weights do: the brighter cell is the
    // larger weight (the ramp's lightness rises with the weight).
    window.showView(QStringLiteral("attention"));
    QTest::qWait(100);
    const HeadMap map = window.selection().shown();
    const int n = map.size();
    int strongQ = 0, strongK = 0, weakQ = n - 1, weakK = 0;
    for (int q = 0; q < n; ++q)
      for (int k = 0; k <= q; ++k) {
        if (map.weight(q, k) > map.weight(strongQ, strongK)) strongQ = q, strongK = k;
        if (map.weight(q, k) < map.weight(weakQ, weakK)) weakQ = q, weakK = k;
      }
    QVERIFY(map.weight(strongQ, strongK) > 2 * map.weight(weakQ, weakK));
    const QImage heat = window.view<AttentionHeatmapView>()->grab().toImage().convertToFormat(QImage::Format_RGB32);
    const double dpr = heat.devicePixelRatio();
    auto lightness = [&](int q, int k) {
      const QPoint c = window.view<AttentionHeatmapView>()->cellRect(q, k).center() * dpr;
      return QColor(heat.pixel(c)).lightnessF();
    };
    QVERIFY2(lightness(strongQ, strongK) > lightness(weakQ, weakK) + 0.2,
             qPrintable(QStringLiteral("cells (%1,%2) w=%3 and (%4,%5) w=%6")
                            .arg(strongQ).arg(strongK).arg(map.weight(strongQ, strongK))
                            .arg(weakQ).arg(weakK).arg(map.weight(weakQ, weakK))));
  }

  void userGuideOpensFromHelp() {
    MainWindow window(defaultPreset(kTinyOverrides), QStringLiteral("default"));
    window.show();
    QAction* guide = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
      if (action->text() == QStringLiteral("&User guide")) guide = action;
    QVERIFY(guide);
    guide->trigger();
    QTextBrowser* browser = nullptr;  // the guide's own window (the tour dock has a browser too)
    for (QTextBrowser* b : window.findChildren<QTextBrowser*>())
      if (b->window() != &window) browser = b;
    QVERIFY(browser);
    const QString text = browser->toPlainText();
    for (const char* needle : {"Attention variants", "softmax", "sigmoid", "rope", "alibi", "retention", "Head lines", "Head table", "log"})
      QVERIFY2(text.contains(QLatin1String(needle)), needle);
    QVERIFY(text.size() > 5000);
    // Every view's section shows a picture of it, embedded with the guide.
    for (const ViewKind& kind : viewKinds()) {
      QTextBlock block = browser->document()->begin();
      while (block.isValid() && (block.blockFormat().headingLevel() == 0 || block.text() != kind.guideSection)) block = block.next();
      QVERIFY2(block.isValid(), qPrintable(kind.guideSection));
      QString picture;
      for (block = block.next(); block.isValid() && block.blockFormat().headingLevel() == 0 && picture.isEmpty(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it)
          if (it.fragment().charFormat().isImageFormat()) picture = it.fragment().charFormat().toImageFormat().name();
      QVERIFY2(!picture.isEmpty(), qPrintable(kind.guideSection + QStringLiteral(": no picture")));
      const QImage image = browser->document()->resource(QTextDocument::ImageResource, browser->source().resolved(QUrl(picture))).value<QImage>();
      QVERIFY2(!image.isNull(), qPrintable(picture));
    }
  }

  void pauseResumeAndReset() {
    ExperimentConfig config = defaultPreset(kTinyOverrides);
    config.train.steps = 100000;
    MainWindow window(config, QStringLiteral("default"));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy paused(&window.session(), &TrainingSession::pausedAt);

    window.startTraining();
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(window) >= 3, 300000);
    window.session().pause();
    QCOMPARE(window.session().state(), State::Paused);
    QTRY_COMPARE_WITH_TIMEOUT(paused.count(), 1, 30000);  // the step in flight has landed
    const int pausedAt = paused.first().first().toInt();
    QTRY_COMPARE_WITH_TIMEOUT(stepsDone(window), pausedAt, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(window.attentionMap().step(), pausedAt, 5000);  // the map shows that step
    QTest::qWait(500);
    QCOMPARE(stepsDone(window), pausedAt);

    window.session().resume();
    QCOMPARE(window.session().state(), State::Running);
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(window) > pausedAt, 30000);

    window.session().setHeadGains({{1, 1}, {1, 0}});  // a head switched off in the views
    window.session().reset();
    QCOMPARE(window.session().state(), State::Idle);
    QCOMPARE(window.lossHistory().rowCount(), 0);
    QVERIFY(!window.attentionMap().hasMap());
    QVERIFY(window.session().headGains().empty());  // the next experiment starts with every head on
    QTest::qWait(200);  // nothing from the old run arrives after a reset
    QCOMPARE(window.lossHistory().rowCount(), 0);
  }

  void runsToTheEndWithValidation() {
    ExperimentConfig config = defaultPreset(kTinyOverrides);
    config.train.steps = 20;
    TrainingSession session;
    LossHistoryModel history;
    connect(&session, &TrainingSession::lossPointsAdded, &history, &LossHistoryModel::append);
    session.start(config);
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Finished, 300000);
    QCOMPARE(history.rowCount(), 20);
    for (int row = 0; row < 20; ++row) QCOMPARE(history.points()[row].step, row + 1);
    // eval_every=10: validation at steps 10 and 20 only.
    QVERIFY(std::isfinite(history.points()[9].val_loss));
    QVERIFY(std::isfinite(history.points()[19].val_loss));
    QVERIFY(std::isnan(history.points()[4].val_loss));
  }

  void pausesByItselfAtTheRequestedStep() {
    ExperimentConfig config = defaultPreset(kTinyOverrides);
    config.train.steps = 50;
    TrainingSession session;
    LossHistoryModel history;
    connect(&session, &TrainingSession::lossPointsAdded, &history, &LossHistoryModel::append);
    std::shared_ptr<const TraceSnapshot> lastTrace;
    connect(&session, &TrainingSession::traced, [&](const auto& trace) { lastTrace = trace; });
    session.setPauseAtStep(7);
    session.start(config);
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Paused, 300000);
    QTRY_VERIFY_WITH_TIMEOUT(lastTrace && lastTrace->step == 7, 10000);
    QCOMPARE(history.rowCount(), 7);
    session.resume();
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Finished, 300000);
    QCOMPARE(history.rowCount(), 50);
    QCOMPARE(lastTrace->step, 50);
  }

  void badConfigurationFailsWithAMessage() {
    ExperimentConfig config = defaultPreset(kTinyOverrides);
    config.model.n_heads = 3;  // does not divide d_model = 32
    TrainingSession session;
    QSignalSpy failed(&session, &TrainingSession::failed);
    session.start(config);
    QTRY_COMPARE_WITH_TIMEOUT(session.state(), State::Failed, 30000);
    QCOMPARE(failed.count(), 1);
    const QString message = failed.first().first().toString();
    QVERIFY2(!message.isEmpty() && !message.contains(QLatin1Char('\n')), qPrintable(message));
  }

  void screenshotOfTheAppIsNotBlank() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("shot.png"));
    QStringList arguments = {"--preset", "default", "--steps", "40", "--screenshot", file, "--quit-after-steps", "12"};
    for (const QString& o : kTinyOverrides) arguments << "--set" << o;
    const Run run = runProgram(QStringLiteral(ATTNLAB_APP), arguments);
    QVERIFY2(run.exitCode == 0, run.err.constData());

    QImage shot(file);
    QVERIFY2(!shot.isNull(), "the screenshot is missing or unreadable");
    QVERIFY(shot.width() >= 800 && shot.height() >= 500);
    const int colours = distinctSaturatedColours(shot.convertToFormat(QImage::Format_RGB32));
    qInfo("screenshot %dx%d with %d distinct saturated colours", shot.width(), shot.height(), colours);
    QVERIFY2(colours >= 50, qPrintable(QStringLiteral("only %1 distinct colours: the window looks blank").arg(colours)));
  }

  void badArgumentsExitWithOneLine() {
    for (const QStringList& arguments : {QStringList{"--preset", "no_such_preset"}, QStringList{"--steps", "many"},
                                         QStringList{"--screenshot", "x.png"}, QStringList{"--set", "model.nonsense=1"}}) {
      const Run run = runProgram(QStringLiteral(ATTNLAB_APP), arguments);
      QCOMPARE(run.exitCode, 2);
      // Exactly one line of ours (Qt itself may warn about the environment on other lines).
      const QStringList ours = QString::fromUtf8(run.err).split(QLatin1Char('\n')).filter(QRegularExpression(QStringLiteral("^attnlab: ")));
      QVERIFY2(ours.size() == 1 && ours.first().size() > 20, run.err.constData());
    }
  }
};

int main(int argc, char** argv) {
  // Under scripts/test.sh this runs on Xvfb; anywhere without a display, offscreen.
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QSurfaceFormat format;  // as app/gui/main.cpp: what the VTK view needs
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);
  AppSmokeTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_app_smoke.moc"
