// The real window under a monkey: for 60 seconds (ATTNLAB_MONKEY_SECONDS), random clicks, drags,
// keys and wheel turns land on the widgets under random points, views and presets switch, the
// panel's editors and the probe get random values, while training runs. Seeded
// (ATTNLAB_MONKEY_SEED, printed), so a failure replays. Afterwards the window must still save a
// loadable checkpoint and close. No crash, no assertion, and no UI-thread stall above
// kWorstTimerGapMs beyond the 3D view's first show (which builds its OpenGL context).
// Dialogs the monkey opens are closed by a watcher, as a user would press Escape.
#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QMenu>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QWheelEvent>
#include <QtTest>

#include <random>

#include "experiment_files.h"
#include "experiment_panel.h"
#include "io/config_json.h"
#include "main_window.h"
#include "probe_editor.h"
#include "training_session.h"
#include "view_kind.h"

using namespace attnlab;

namespace {

// The bound. The 3D view draws through an offscreen OpenGL context (qk_embedding_view.h):
// while it was a QOpenGLWidget, Qt composed the whole window with software OpenGL under Xvfb and
// the worst gaps were 0.6-1.6 s. Since then, on a nearly idle 2-core Xeon: 144 ms (first chart
// layouts); beside three busy processes (load 4): 497 ms. Gaps over a fifth of it are listed.
constexpr qint64 kWorstTimerGapMs = 500;
constexpr qint64 kFirstThreeDShowMs = 1500;

int envInt(const char* name, int fallback) {
  bool ok = false;
  const int v = qEnvironmentVariableIntValue(name, &ok);
  return ok ? v : fallback;
}

ExperimentConfig tinyDefault() {
  ExperimentConfig config;
  if (const std::string error = loadPreset("default", config); !error.empty()) qFatal("default preset: %s", error.c_str());
  for (const char* o : {"model.d_model=32", "model.n_layers=2", "model.n_heads=2", "model.d_ff=64", "model.context=24", "train.batch=4",
                        "train.eval_every=10", "train.steps=100000"})
    if (const std::string why = applyOverride(config, o); !why.empty()) qFatal("override %s: %s", o, why.c_str());
  return config;
}

// Widgets a random point may hit: everything visible inside the window but the menu bar (whose
// Quit would end the test) and its menus.
QWidget* widgetAt(MainWindow& window, QPoint p) {
  QWidget* w = window.childAt(p);
  for (QWidget* up = w; up; up = up->parentWidget())
    if (up == window.menuWidget()) return nullptr;
  return w;
}

// "click on QPushButton 'Apply' in ExperimentPanel": which widget an action hit, for the report.
QString describe(const QString& action, const QWidget* w) {
  if (!w) return action;
  QString text = action + QStringLiteral(" on ") + QString::fromLatin1(w->metaObject()->className());
  if (const auto* button = qobject_cast<const QAbstractButton*>(w)) text += QStringLiteral(" '%1'").arg(button->text());
  for (const QWidget* up = w->parentWidget(); up; up = up->parentWidget())
    if (QString name = QString::fromLatin1(up->metaObject()->className()); name.startsWith(QStringLiteral("attnlab::")))
      return text + QStringLiteral(" in ") + name.mid(9);
  return text;
}

}  // namespace

class TestMonkey : public QObject {
  Q_OBJECT

 private slots:
  void randomUseWhileTrainingBreaksNothing() {
    const int seed = envInt("ATTNLAB_MONKEY_SEED", 20261201);
    const int seconds = envInt("ATTNLAB_MONKEY_SECONDS", 60);
    qInfo("monkey seed %d for %d s (replay: ATTNLAB_MONKEY_SEED=%d)", seed, seconds, seed);
    std::mt19937 rng(static_cast<unsigned>(seed));
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

    MainWindow window(tinyDefault(), QStringLiteral("default"));
    window.files().setPrompt([](const QString&) { return QMessageBox::Discard; });
    window.resize(1400, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.startTraining();

    // Dialogs and popups the monkey opens are dismissed, as with Escape.
    QTimer dismiss;
    connect(&dismiss, &QTimer::timeout, [] {
      if (QWidget* modal = QApplication::activeModalWidget()) modal->close();
      if (QWidget* popup = QApplication::activePopupWidget()) popup->close();
    });
    dismiss.start(150);

    // The UI thread answers a 10 ms timer; gaps are measured except just after the 3D view's first show.
    QElapsedTimer sinceTick, sinceThreeD;
    qint64 worst = 0;
    QString worstDuring;
    QString lastAction;
    QStringList longGaps;  // every gap over a fifth of the bound, for the report
    QTimer ticker;
    sinceTick.start();
    connect(&ticker, &QTimer::timeout, [&] {
      const qint64 gap = sinceTick.restart();
      const bool threeDGrace = sinceThreeD.isValid() && sinceThreeD.elapsed() < kFirstThreeDShowMs + gap;
      if (threeDGrace) return;
      if (gap > kWorstTimerGapMs / 5) longGaps << QStringLiteral("%1 ms during '%2'").arg(gap).arg(lastAction);
      if (gap > worst) worst = gap, worstDuring = lastAction;
    });
    ticker.start(10);

    const QStringList presets = {"default", "induction", "copy", "sorting", "associative_recall", "softmax_vs_sigmoid", "gated_sigmoid"};
    const auto kinds = viewKinds();
    QElapsedTimer running;
    running.start();
    int actions = 0;
    while (running.elapsed() < seconds * 1000) {
      const QPoint p(uniform(0, window.width() - 1), uniform(0, window.height() - 1));
      QWidget* target = widgetAt(window, p);
      const QPoint local = target ? target->mapFrom(&window, p) : QPoint();
      switch (uniform(0, 11)) {
        case 0:
        case 1:
        case 2:
          lastAction = describe(QStringLiteral("click"), target);
          if (target) QTest::mouseClick(target, Qt::LeftButton, {}, local);
          break;
        case 3:
          lastAction = describe(QStringLiteral("drag"), target);
          if (target) {
            QTest::mousePress(target, Qt::LeftButton, {}, local);
            QTest::mouseMove(target, local + QPoint(uniform(-80, 80), uniform(-80, 80)));
            QTest::mouseRelease(target, Qt::LeftButton, {}, local + QPoint(uniform(-80, 80), uniform(-80, 80)));
          }
          break;
        case 4:
          lastAction = describe(QStringLiteral("wheel"), target);
          if (target) {
            QWheelEvent wheel(local, target->mapToGlobal(local), {}, QPoint(0, uniform(-3, 3) * 120), Qt::NoButton, {},
                              Qt::NoScrollPhase, false);
            QApplication::sendEvent(target, &wheel);
          }
          break;
        case 5: {
          lastAction = describe(QStringLiteral("key"), QApplication::focusWidget());
          static const int keys[] = {Qt::Key_A, Qt::Key_Z, Qt::Key_3, Qt::Key_Space, Qt::Key_Backspace, Qt::Key_Left, Qt::Key_Right,
                                     Qt::Key_Up,  Qt::Key_Down, Qt::Key_Tab, Qt::Key_Return, Qt::Key_Escape, Qt::Key_PageDown};
          if (QWidget* focus = QApplication::focusWidget(); focus && focus->window() == &window)
            QTest::keyClick(focus, static_cast<Qt::Key>(keys[uniform(0, 12)]));
          break;
        }
        case 6: {
          const auto& kind = kinds[static_cast<size_t>(uniform(0, static_cast<int>(kinds.size()) - 1))];
          lastAction = QStringLiteral("view ") + kind.id;
          window.showView(kind.id);
          if (kind.id == QStringLiteral("embedding") && !sinceThreeD.isValid()) sinceThreeD.start();
          break;
        }
        case 7: {
          // a panel editor gets a random value (the user then may Apply, by a random click)
          const auto editors = window.experimentPanel().findChildren<QWidget*>();
          QWidget* e = editors.isEmpty() ? nullptr : editors[uniform(0, static_cast<int>(editors.size()) - 1)];
          lastAction = QStringLiteral("panel edit");
          if (auto* spin = qobject_cast<QAbstractSpinBox*>(e)) {
            spin->selectAll();
            QTest::keyClicks(spin, QString::number(uniform(-5, 5000)));
          } else if (auto* combo = qobject_cast<QComboBox*>(e); combo && combo->count() > 0) {
            combo->setCurrentIndex(uniform(0, combo->count() - 1));
          } else if (auto* line = qobject_cast<QLineEdit*>(e)) {
            line->setText(QString::number(uniform(0, 99)) + QStringLiteral(" xy"));
          }
          break;
        }
        case 8: {
          static const QStringList words = {"the", "dog", "a b a b", "qqqzz", "", "ab", "the dog sees the cat", "1 + 2 ="};
          lastAction = QStringLiteral("probe");
          window.probeEditor()->submit(words[uniform(0, static_cast<int>(words.size()) - 1)]);
          break;
        }
        case 9:
          if (uniform(0, 9) == 0) {  // presets rebuild the model: now and then
            lastAction = QStringLiteral("preset");
            window.applyPreset(presets[uniform(0, static_cast<int>(presets.size()) - 1)]);
          }
          break;
        case 10:
          if (window.session().state() != TrainingSession::State::Running) {  // after a preset or a pause, train again
            lastAction = QStringLiteral("train");
            window.startTraining();
          }
          break;
        default:
          lastAction = QStringLiteral("idle");
          break;
      }
      ++actions;
      QTest::qWait(uniform(5, 40));
    }
    ticker.stop();
    qInfo("%d actions; worst UI-thread gap %lld ms (during '%s'), training at step %d", actions, worst, qPrintable(worstDuring),
          window.files().trainedSteps());
    for (const QString& gap : longGaps) qInfo("  gap of %s", qPrintable(gap));
    QVERIFY2(worst <= kWorstTimerGapMs, qPrintable(QString("the UI thread stalled %1 ms during '%2'").arg(worst).arg(worstDuring)));

    // Still saves a checkpoint that opens, and closes cleanly. The monkey may have ended on a fresh
    // preset (step 0, which has nothing to save): it trains a step first.
    if (window.files().trainedSteps() == 0) {
      if (window.session().state() != TrainingSession::State::Running) window.startTraining();
      QTRY_VERIFY_WITH_TIMEOUT(window.files().trainedSteps() > 0, 60000);
    }
    dismiss.stop();
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("after-monkey"));
    QCOMPARE(window.files().saveAndStop(folder), QString());
    QFile saved(folder + QStringLiteral("/config.json"));
    QVERIFY2(saved.open(QIODevice::ReadOnly), "the save wrote no config.json");
    ExperimentConfig reopened;
    const std::string error = configFromJson(saved.readAll().toStdString(), reopened);
    QVERIFY2(error.empty(), error.c_str());
    window.close();
    QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 10000);
  }
};

int main(int argc, char** argv) {
  QTemporaryDir settings;
  QStandardPaths::setTestModeEnabled(true);
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("attnlab-test"));
  QApplication::setApplicationName(QStringLiteral("test_monkey"));
  TestMonkey test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_monkey.moc"
