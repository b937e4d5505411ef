// `attnlab --benchmark-ui` (app/gui/ui_benchmark.h) runs the real window, trains, prints its table
// and writes its figures; misused flags fail with one line (after any line Qt itself prints). No timing is asserted: only that each
// figure was measured.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "../cli_support.h"

namespace {

// The default preset made small, so the steps take well under a second.
const QStringList kSmall = {"--set", "model.d_model=32", "--set", "model.n_layers=2", "--set", "model.context=24",
                            "--set", "train.batch=4"};

}  // namespace

class TestUiBenchmark : public QObject {
  Q_OBJECT
 private slots:
  void printsAndWritesEveryFigure() {
    QTemporaryDir dir;
    const QString json = dir.filePath(QStringLiteral("ui.json"));
    const Run run = runProgram(QStringLiteral(ATTNLAB_APP), kSmall + QStringList{"--benchmark-ui", "--steps", "3", "--out", json});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QVERIFY2(run.out.contains("UI timer lateness ms"), run.out.constData());
    QVERIFY(run.out.contains("24x24 heatmap redraw ms (50 redraws)"));
    QVERIFY(run.out.contains("heatmap redraw, UI-thread CPU ms"));

    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject figures = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(figures[QStringLiteral("probe_tokens")].toInt(), 24);
    QCOMPARE(figures[QStringLiteral("training_steps")].toInt(), 3);
    QVERIFY(figures[QStringLiteral("timer_ticks")].toInt() > 0);
    QCOMPARE(figures[QStringLiteral("heatmap_redraws")].toInt(), 50);
    for (const char* key : {"timer_lateness_ms", "heatmap_redraw_ms", "heatmap_redraw_cpu_ms"}) {
      const QJsonObject s = figures[QLatin1String(key)].toObject();
      QVERIFY2(s.contains(QStringLiteral("p50")) && s.contains(QStringLiteral("p99")) && s.contains(QStringLiteral("max")), key);
      QVERIFY2(s[QStringLiteral("p50")].toDouble() <= s[QStringLiteral("p99")].toDouble(), key);
      QVERIFY2(s[QStringLiteral("p99")].toDouble() <= s[QStringLiteral("max")].toDouble(), key);
    }
    QVERIFY(figures[QStringLiteral("heatmap_redraw_ms")].toObject()[QStringLiteral("p50")].toDouble() > 0);  // it drew
  }

  void misusedFlagsFailWithOneLine() {
    Run run = runProgram(QStringLiteral(ATTNLAB_APP), {"--out", "x.json"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.trimmed().endsWith("attnlab: --out FILE goes with --benchmark-ui"), run.err.constData());
    run = runProgram(QStringLiteral(ATTNLAB_APP), {"--benchmark-ui", "--quit-after-steps", "2", "--screenshot", "x.png"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.trimmed().endsWith("attnlab: --benchmark-ui and --quit-after-steps do not go together"),
             run.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestUiBenchmark)
#include "test_ui_benchmark.moc"
