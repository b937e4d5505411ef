// app/cli/report_chart.h's error bars: drawn for a point whose interval has two finite positive
// ends apart, spanning the interval (the axis stretches to hold it), and absent otherwise.
#include <QtTest>

#include <QImage>
#include <cmath>

#include "report_chart.h"

using namespace attnlab::cli;

namespace {
// Pixels near the first series' colour (the palette's blue, 31 119 180) in column band [x0, x1).
int bluePixels(const QString& path, int x0 = 0, int x1 = 100000) {
  const QImage image(path);
  int count = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = std::max(0, x0); x < std::min(image.width(), x1); ++x) {
      const QColor c = image.pixelColor(x, y);
      count += std::abs(c.red() - 31) + std::abs(c.green() - 119) + std::abs(c.blue() - 180) < 60;
    }
  return count;
}
}  // namespace

class TestReportChart : public QObject {
  Q_OBJECT

 private slots:
  void errorBarsSpanTheirIntervalOnly() {
    QTemporaryDir tmp;
    const OffscreenGui gui;
    const LineChart chart{"t", "x", "y", {{"a", {1}, {10}, false}, {"b", {2}, {12}, false}}, false};
    const QString plain = tmp.filePath("plain.png"), barred = tmp.filePath("barred.png"), flat = tmp.filePath("flat.png"),
                  broken = tmp.filePath("broken.png");
    QCOMPARE(QString::fromStdString(writeLineChartPng(chart, plain.toStdString())), QString());
    QCOMPARE(QString::fromStdString(writeErrorBarChartPng(chart, {{{5}, {15}}}, barred.toStdString())), QString());
    QCOMPARE(QString::fromStdString(writeErrorBarChartPng(chart, {{{10}, {10}}}, flat.toStdString())), QString());
    QCOMPARE(QString::fromStdString(writeErrorBarChartPng(chart, {{{NAN}, {15}}}, broken.toStdString())), QString());
    // the plot is 480 px high; the bar from 5 to 15 spans most of it, as the axis stretches to 5..15
    const int plainCount = bluePixels(plain, 0, 730), barredCount = bluePixels(barred, 0, 730);
    QVERIFY2(barredCount - plainCount > 300, qPrintable(QString("%1 -> %2").arg(plainCount).arg(barredCount)));
    // no bar for an interval of no width or with an end that is not finite: as the plain chart, point
    // for point, except for the x margin error-bar charts keep (which moves nothing blue in or out)
    QCOMPARE(bluePixels(flat), bluePixels(broken));
    QVERIFY(std::abs(bluePixels(flat) - bluePixels(plain)) < 20);
  }
  void needsAnOffscreenGui() {
    QTemporaryDir tmp;
    const LineChart chart{"t", "x", "y", {{"a", {1}, {10}, false}}, false};
    QCOMPARE(QString::fromStdString(writeErrorBarChartPng(chart, {}, tmp.filePath("x.png").toStdString())),
             QString("charts need an OffscreenGui"));
  }
};

QTEST_APPLESS_MAIN(TestReportChart)
#include "test_report_chart.moc"
