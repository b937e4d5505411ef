#pragma once
// Line charts drawn to PNG files for the study reports: QPainter on a QImage, offscreen, so the
// CLI needs Qt Gui but never a display.
#include <memory>
#include <string>
#include <vector>

namespace attnlab::cli {

// While alive, a QGuiApplication on the offscreen platform (QPainter's text needs one), with
// Qt's own warnings silenced: the CLI's output stays its own.
class OffscreenGui {
 public:
  OffscreenGui();
  ~OffscreenGui();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ChartSeries {
  std::string name;
  std::vector<double> x, y;
  bool dashed = false;  // a reference line (e.g. the dense model)
  // A band drawn behind the line (e.g. the 95% interval over seeds): empty, or one low and one high per x.
  std::vector<double> low = {}, high = {};
};

struct LineChart {
  std::string title, xLabel, yLabel;
  std::vector<ChartSeries> series;
  bool xPercent = false;  // tick labels as percentages of 1
  bool linearY = false;   // a linear y axis from 0 that draws zeros (shares, accuracies), never logarithmic
};

// Writes `chart` as a PNG. Unless linearY, the y axis turns logarithmic (and says so) when the
// values (bands and error bars included) span more than a factor of 20, and values <= 0 are left
// out. Needs an OffscreenGui alive. Returns "" or a one-line reason.
std::string writeLineChartPng(const LineChart& chart, const std::string& path, int width = 960, int height = 600);

// Each point's interval, drawn as a vertical error bar: low[i], high[i] for point i of a series.
struct ErrorBars {
  std::vector<double> low, high;
};
// The same chart with error bars: bars[s] belongs to chart.series[s] (missing or empty: none).
std::string writeErrorBarChartPng(const LineChart& chart, const std::vector<ErrorBars>& bars, const std::string& path,
                                  int width = 960, int height = 600);

}  // namespace attnlab::cli
