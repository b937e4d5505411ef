// The study reports' line charts (app/cli/report_chart.cpp): the band mode draws a series' 95%
// interval behind its line, to the axis' scale, and refuses a band that does not match the points.
#include <QtTest>

#include <QImage>

#include "report_chart.h"

using namespace attnlab::cli;

namespace {

// The first palette colour (31, 119, 180) at the band's opacity over white, give or take blending.
bool isBandTint(QRgb c) {
  return qAbs(qRed(c) - 229) <= 5 && qAbs(qGreen(c) - 239) <= 5 && qAbs(qBlue(c) - 246) <= 5;
}

// Band-tinted pixels in the image column halfway between the first two points.
int tintedRowsMidway(const LineChart& chart, const QString& path) {
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
    LineChart chart{"band", "x", "y", {}, false};
    chart.series.push_back({"mean", {0, 1}, {10, 10}, false, {2, 2}, {18, 18}});
    const QString path = tmp.filePath("axis.png");
    QCOMPARE(writeLineChartPng(chart, path.toStdString()), std::string());
    const QImage image(path);
    int tinted = 0;  // the band spans most of the plot's height, not a sliver around y = 10 alone
    for (int y = 0; y < image.height(); ++y) tinted += isBandTint(image.pixel(image.width() / 3, y));
    QVERIFY2(tinted > 0.7 * (image.height() - 120), qPrintable(QString::number(tinted)));
  }

  void mismatchedBandIsRefused() {
    QTemporaryDir tmp;
    LineChart chart = chartWithBand(5, 20);
    chart.series[0].high.pop_back();
    const std::string why = writeLineChartPng(chart, tmp.filePath("bad.png").toStdString());
    QVERIFY2(why.find("needs one low and one high per point") != std::string::npos, why.c_str());
  }
};

QTEST_MAIN(TestReportChart)
#include "test_report_chart.moc"
