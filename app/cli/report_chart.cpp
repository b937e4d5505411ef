#include "report_chart.h"

#include <QGuiApplication>
#include <QFontMetrics>
#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <QPolygonF>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace attnlab::cli {
namespace {

int gArgc = 1;
char gName[] = "attnlab-cli";
char* gArgv[] = {gName, nullptr};

void dropQtMessages(QtMsgType, const QMessageLogContext&, const QString&) {}

// About `count` round tick values covering [lo, hi].
std::vector<double> niceTicks(double lo, double hi, int count) {
  const double span = hi - lo > 0 ? hi - lo : 1.0;
  const double raw = span / count, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

QString tickText(double v, bool percent) {
  if (percent) return QString::number(v * 100, 'g', 4) + "%";
  return QString::number(v, 'g', 4);
}

const QColor kPalette[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),  QColor(214, 39, 40),
                           QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(23, 190, 207),
                           QColor(188, 189, 34),  QColor(127, 127, 127)};

bool hasBand(const ChartSeries& s) { return !s.low.empty() && s.low.size() == s.x.size(); }

// The band's outline: along the highs left to right, back along the lows; points where the band is
// not finite and positive (a log axis cannot show them) are left out.
template <class Px, class Py>
QPolygonF bandPolygon(const ChartSeries& s, Px px, Py py) {
  auto drawable = [&](size_t i) { return std::isfinite(s.low[i]) && std::isfinite(s.high[i]) && s.low[i] > 0 && s.high[i] > 0; };
  QPolygonF outline;
  for (size_t i = 0; i < s.x.size(); ++i)
    if (drawable(i)) outline << QPointF(px(s.x[i]), py(s.high[i]));
  for (size_t i = s.x.size(); i-- > 0;)
    if (drawable(i)) outline << QPointF(px(s.x[i]), py(s.low[i]));
  return outline;
}

}  // namespace

struct OffscreenGui::Impl {
  QtMessageHandler previous = nullptr;
  std::unique_ptr<QGuiApplication> app;
};

OffscreenGui::OffscreenGui() : impl_(std::make_unique<Impl>()) {
  impl_->previous = qInstallMessageHandler(dropQtMessages);
  qputenv("QT_QPA_PLATFORM", "offscreen");
  impl_->app = std::make_unique<QGuiApplication>(gArgc, gArgv);
}

OffscreenGui::~OffscreenGui() {
  impl_->app.reset();
  qInstallMessageHandler(impl_->previous);
}

std::string writeLineChartPng(const LineChart& chart, const std::string& path, int width, int height) {
  return writeErrorBarChartPng(chart, {}, path, width, height);
}

std::string writeErrorBarChartPng(const LineChart& chart, const std::vector<ErrorBars>& bars, const std::string& path, int width,
                                  int height) {
  if (!QGuiApplication::instance()) return "charts need an OffscreenGui";
  // point i of series s has an error bar when both ends are finite, positive (the axis may be logarithmic) and apart
  auto barOf = [&](size_t s, size_t i, double& low, double& high) {
    if (s >= bars.size() || i >= bars[s].low.size() || i >= bars[s].high.size()) return false;
    low = bars[s].low[i], high = bars[s].high[i];
    return std::isfinite(low) && std::isfinite(high) && low > 0 && high > low;
  };
  // A log axis cannot show 0; a linear one (shares, accuracies) draws it.
  auto drawable = [&](double y) { return std::isfinite(y) && (y > 0 || (chart.linearY && y == 0)); };
  double xMin = std::numeric_limits<double>::infinity(), xMax = -xMin, yMin = xMin, yMax = -xMin;
  for (size_t k = 0; k < chart.series.size(); ++k) {
    const ChartSeries& s = chart.series[k];
    if (hasBand(s) != !s.low.empty() || s.high.size() != s.low.size())
      return "chart '" + chart.title + "': the band of '" + s.name + "' needs one low and one high per point";
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!drawable(s.y[i])) continue;
      double low = 0, high = 0;
      const bool bar = barOf(k, i, low, high);
      xMin = std::min(xMin, s.x[i]);
      xMax = std::max(xMax, s.x[i]);
      if (bar) yMin = std::min(yMin, low), yMax = std::max(yMax, high);
      for (double y : hasBand(s) ? std::vector<double>{s.y[i], s.low[i], s.high[i]} : std::vector<double>{s.y[i]})
        if (drawable(y)) yMin = std::min(yMin, y), yMax = std::max(yMax, y);
    }
  }
  if (!std::isfinite(xMin) || !std::isfinite(yMin)) return "chart '" + chart.title + "' has no finite positive values";
  const bool logY = !chart.linearY && yMax / yMin > 20;
  auto yValue = [&](double y) { return logY ? std::log10(y) : y; };
  double lo = yValue(yMin), hi = yValue(yMax);
  const double pad = (hi - lo > 0 ? hi - lo : 1.0) * 0.06;
  lo -= pad;
  hi += pad;
  if (!logY) lo = chart.linearY ? 0.0 : std::max(0.0, lo);
  if (xMax == xMin) xMax = xMin + 1;
  if (!bars.empty()) {  // points with bars stand alone: keep the outermost ones and their caps inside the frame
    const double margin = 0.05 * (xMax - xMin);
    xMin -= margin;
    xMax += margin;
  }

  QImage image(width, height, QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  QFont font = p.font();
  font.setPixelSize(13);
  p.setFont(font);
  // The legend is as wide as its longest label needs, up to 40% of the picture; a label longer
  // than that is shortened in the middle, where the parts that tell series apart rarely sit.
  const QFontMetrics metrics(font);
  int longest = 0;
  for (const ChartSeries& s : chart.series) longest = std::max(longest, metrics.horizontalAdvance(QString::fromStdString(s.name)));
  const int labelWidth = std::clamp(longest + 8, 180, static_cast<int>(width * 0.4) - 50);
  const QRectF plot(80, 50, width - 80 - (labelWidth + 50), height - 50 - 70);
  auto px = [&](double x) { return plot.left() + (x - xMin) / (xMax - xMin) * plot.width(); };
  auto py = [&](double y) { return plot.bottom() - (yValue(y) - lo) / (hi - lo) * plot.height(); };

  // title, grid, ticks
  QFont titleFont = font;
  titleFont.setPixelSize(16);
  titleFont.setBold(true);
  p.setFont(titleFont);
  p.drawText(QRectF(0, 10, width, 30), Qt::AlignHCenter, QString::fromStdString(chart.title));
  p.setFont(font);
  p.setPen(QPen(QColor(225, 225, 225), 1));
  const std::vector<double> xTicks = niceTicks(xMin, xMax, 6);
  std::vector<double> yTicks;
  if (logY) {
    for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e)
      for (double m : {1.0, 2.0, 5.0})
        if (const double v = m * std::pow(10.0, e); yValue(v) >= lo && yValue(v) <= hi) yTicks.push_back(v);
  } else {
    yTicks = niceTicks(lo, hi, 6);
  }
  for (double x : xTicks) p.drawLine(QPointF(px(x), plot.top()), QPointF(px(x), plot.bottom()));
  for (double y : yTicks) p.drawLine(QPointF(plot.left(), py(y)), QPointF(plot.right(), py(y)));
  p.setPen(QPen(Qt::black, 1));
  p.drawRect(plot);
  for (double x : xTicks)
    p.drawText(QRectF(px(x) - 40, plot.bottom() + 4, 80, 20), Qt::AlignHCenter | Qt::AlignTop, tickText(x, chart.xPercent));
  for (double y : yTicks) p.drawText(QRectF(0, py(y) - 10, plot.left() - 6, 20), Qt::AlignRight | Qt::AlignVCenter, tickText(y, false));
  p.drawText(QRectF(plot.left(), plot.bottom() + 28, plot.width(), 20), Qt::AlignHCenter, QString::fromStdString(chart.xLabel));
  p.save();
  p.translate(18, plot.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-plot.height() / 2, -10, plot.height(), 20), Qt::AlignHCenter,
             QString::fromStdString(chart.yLabel) + (logY ? " (log scale)" : ""));
  p.restore();

  // bands first, so that every line stays on top of them
  p.setClipRect(plot.adjusted(-4, -4, 4, 4));
  for (size_t s = 0; s < chart.series.size(); ++s)
    if (const ChartSeries& series = chart.series[s]; hasBand(series)) {
      QColor fill = series.dashed ? QColor(60, 60, 60) : kPalette[s % std::size(kPalette)];
      fill.setAlpha(30);  // pale: several bands overlap and the lines must stay readable
      p.setPen(Qt::NoPen);
      p.setBrush(fill);
      p.drawPolygon(bandPolygon(series, px, py));
    }

  // series and legend
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    const QColor colour = series.dashed ? QColor(60, 60, 60) : kPalette[s % std::size(kPalette)];
    QPen pen(colour, series.dashed ? 1.5 : 2.2);
    if (series.dashed) pen.setStyle(Qt::DashLine);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);  // a path is a line here, never a filled shape
    QPainterPath line;
    bool started = false;
    for (size_t i = 0; i < series.x.size(); ++i) {
      if (!drawable(series.y[i])) continue;
      const QPointF point(px(series.x[i]), py(series.y[i]));
      started ? line.lineTo(point) : line.moveTo(point);
      started = true;
    }
    p.drawPath(line);
    if (!series.dashed)
      for (size_t i = 0; i < series.x.size(); ++i)
        if (drawable(series.y[i])) {
          if (double low = 0, high = 0; barOf(s, i, low, high)) {
            const double x = px(series.x[i]), top = py(high), bottom = py(low);
            p.drawLine(QPointF(x, top), QPointF(x, bottom));
            p.drawLine(QPointF(x - 5, top), QPointF(x + 5, top));
            p.drawLine(QPointF(x - 5, bottom), QPointF(x + 5, bottom));
          }
          p.setBrush(colour);
          p.drawEllipse(QPointF(px(series.x[i]), py(series.y[i])), 3.5, 3.5);
        }
  }
  p.setClipping(false);
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    const QColor colour = series.dashed ? QColor(60, 60, 60) : kPalette[s % std::size(kPalette)];
    const double y = plot.top() + 10 + 22.0 * s;
    QPen pen(colour, 2.2);
    if (series.dashed) pen.setStyle(Qt::DashLine);
    p.setPen(pen);
    p.drawLine(QPointF(plot.right() + 16, y), QPointF(plot.right() + 44, y));
    p.setPen(Qt::black);
    p.drawText(QRectF(plot.right() + 50, y - 10, labelWidth, 20), Qt::AlignLeft | Qt::AlignVCenter,
               metrics.elidedText(QString::fromStdString(series.name), Qt::ElideMiddle, labelWidth));
  }
  p.end();
  if (!image.save(QString::fromStdString(path), "PNG")) return "cannot write " + path;
  return {};
}

}  // namespace attnlab::cli
