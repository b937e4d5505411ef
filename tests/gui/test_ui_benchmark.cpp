// `attnlab --benchmark-ui` (app/gui/ui_benchmark.h) runs the real window, trains, prints its table
// and writes its figures; misused flags fail with one line (after any line Qt itself prints). No timing is asserted: only that each
// figure was measured.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
  int exitCode = -1;
  QString out, err;
};

Run runApp(const QStringList& arguments) {
  QProcess app;
  app.start(QStringLiteral(ATTNLAB_APP), arguments);
  Run run;
  if (!app.waitForFinished(300000)) {
    app.kill();
    app.waitForFinished();
    return run;
  }
  run.exitCode = app.exitStatus() == QProcess::NormalExit ? app.exitCode() : -1;
  run.out = QString::fromUtf8(app.readAllStandardOutput());
  run.err = QString::fromUtf8(app.readAllStandardError());
  return run;
}

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
    const Run run = runApp(kSmall + QStringList{"--benchmark-ui", "--steps", "3", "--out", json});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.out.contains(QStringLiteral("UI timer lateness ms")), qPrintable(run.out));
    QVERIFY(run.out.contains(QStringLiteral("24x24 heatmap redraw ms (50 redraws)")));
    QVERIFY(run.out.contains(QStringLiteral("heatmap redraw, UI-thread CPU ms")));

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
    Run run = runApp({"--out", "x.json"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.trimmed().endsWith(QStringLiteral("attnlab: --out FILE goes with --benchmark-ui")), qPrintable(run.err));
    run = runApp({"--benchmark-ui", "--quit-after-steps", "2", "--screenshot", "x.png"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.trimmed().endsWith(QStringLiteral("attnlab: --benchmark-ui and --quit-after-steps do not go together")),
             qPrintable(run.err));
  }
};

QTEST_GUILESS_MAIN(TestUiBenchmark)
#include "test_ui_benchmark.moc"
