// The study reports' line charts (app/cli/report_chart.cpp): error bars are drawn for a point whose
// interval has two finite positive ends apart, spanning the interval (the axis stretches to hold it),
// and absent otherwise; the band mode draws a series' 95% interval behind its line, to the axis'
// scale, and refuses a band that does not match the points.
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

// The first palette colour (31, 119, 180) at the band's opacity over white, give or take blending.
bool isBandTint(QRgb c) {
  return qAbs(qRed(c) - 229) <= 5 && qAbs(qGreen(c) - 239) <= 5 && qAbs(qBlue(c) - 246) <= 5;
}

// Band-tinted pixels in the image column halfway between the first two points.
int tintedRowsMidway(const LineChart& chart, const QString& path) {
  const OffscreenGui gui;
  if (const std::string why = writeLineChartPng(chart, path.toStdString()); !why.empty()) qFatal("%s", why.c_str());
  const QImage image(path);
  int count = 0, column = -1;
  for (int x = 0; x < image.width() && column < 0; ++x)  // the plot's left edge is the first dark column
    if (qGray(image.pixel(x, image.height() / 2)) < 60) column = x;
  column += (image.width() - 310) / 4;  // a quarter of the plot's width in: between x = 0 and x = 1 of 0..2
  for (int y = 0; y < image.height(); ++y) count += isBandTint(image.pixel(column, y));
  return count;
}

LineChart chartWithBand(double low, double high) {
  LineChart chart{"band", "x", "y", {}, false};
  chart.series.push_back({"mean", {0, 1, 2}, {10, 10, 10}, false, {low, low, low}, {high, high, high}});
  chart.series.push_back({"fixes the axis", {0, 2}, {1, 30}, true, {}, {}});
  return chart;
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

  void bandIsDrawnToScale() {
    QTemporaryDir tmp;
    LineChart plain = chartWithBand(5, 20);
    plain.series[0].low.clear();
    plain.series[0].high.clear();
    QCOMPARE(tintedRowsMidway(plain, tmp.filePath("plain.png")), 0);
    const int wide = tintedRowsMidway(chartWithBand(5, 20), tmp.filePath("wide.png"));
    const int narrow = tintedRowsMidway(chartWithBand(9, 11), tmp.filePath("narrow.png"));
    QVERIFY2(narrow > 10, qPrintable(QString::number(narrow)));
    // 15 units against 2 on the same linear axis; the line drawn over both takes a few rows off each
    QVERIFY2(wide > 6 * narrow && wide < 10 * narrow, qPrintable(QString("%1 vs %2").arg(wide).arg(narrow)));
  }

  void bandWidensTheAxis() {
    QTemporaryDir tmp;
    const OffscreenGui gui;
    LineChart chart{"band", "x", "y", {}, false};
    chart.series.push_back({"mean", {0, 1}, {10, 10}, false, {2, 2}, {18, 18}});
    const QString path = tmp.filePath("axis.png");
    QCOMPARE(writeLineChartPng(chart, path.toStdString()), std::string());
    const QImage image(path);
    int tinted = 0;  // the band spans most of the plot's height, not a sliver around y = 10 alone
    for (int y = 0; y < image.height(); ++y) tinted += isBandTint(image.pixel(image.width() / 3, y));
    QVERIFY2(tinted > 0.7 * (image.height() - 120), qPrintable(QString::number(tinted)));
  }

  // A long label widens the legend (the plot gives way) and one longer than 40% of the picture is
  // shortened: either way the text ends inside the picture rather than running off its edge.
  void longLegendLabelsStayInsideThePicture() {
    QTemporaryDir tmp;
    const OffscreenGui gui;
    const std::string longer = "output gate, element-wise, with the learnable sink";
    for (const std::string& name : {longer, longer + longer + longer}) {
      LineChart chart{"legend", "x", "y", {}, false};
      chart.series.push_back({name, {0, 1}, {1, 2}, false, {}, {}});
      const QString path = tmp.filePath("legend.png");
      QCOMPARE(writeLineChartPng(chart, path.toStdString()), std::string());
      const QImage image(path);
      const int row = 50 + 10;  // the first legend entry's middle
      int plotRight = -1, textRight = -1;
      for (int x = 0; x < image.width(); ++x) {
        if (qGray(image.pixel(x, image.height() / 2)) < 60) plotRight = x;  // the frame's right edge is the last dark column
        for (int y = row - 8; y <= row + 8; ++y)
          if (qGray(image.pixel(x, y)) < 100) textRight = std::max(textRight, x);
      }
      QVERIFY2(plotRight < image.width() - 230, qPrintable(QString::number(plotRight)));
      QVERIFY2(textRight < image.width() - 4, qPrintable(QString::number(textRight)));
    }
  }

  void mismatchedBandIsRefused() {
    QTemporaryDir tmp;
    const OffscreenGui gui;
    LineChart chart = chartWithBand(5, 20);
    chart.series[0].high.pop_back();
    const std::string why = writeLineChartPng(chart, tmp.filePath("bad.png").toStdString());
    QVERIFY2(why.find("needs one low and one high per point") != std::string::npos, why.c_str());
  }
};

QTEST_APPLESS_MAIN(TestReportChart)
#include "test_report_chart.moc"
