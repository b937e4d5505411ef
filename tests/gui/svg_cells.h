#pragma once
// Reads an exported SVG file as QSvgGenerator writes it: every <rect> with the fill and the
// translation of its enclosing <g> elements, and whether any <image> (an embedded bitmap) is there.
#include <QColor>
#include <QFile>
#include <QPainter>
#include <QRectF>
#include <QRegularExpression>
#include <QStringList>
#include <QSvgGenerator>
#include <QWidget>
#include <QXmlStreamReader>
#include <cmath>
#include <vector>

namespace attnlab::testing {

struct SvgRect {
  QRectF rect;
  QColor fill;
};

struct SvgContents {
  std::vector<SvgRect> rects;
  int images = 0;
  QStringList texts;  // what each <text> says
  QString error;  // "" when the file parsed

  // The rectangles of exactly `size` (to a hundredth of a pixel): a map's cells.
  std::vector<SvgRect> ofSize(QSizeF size) const {
    std::vector<SvgRect> out;
    for (const SvgRect& r : rects)
      if (std::abs(r.rect.width() - size.width()) < 0.01 && std::abs(r.rect.height() - size.height()) < 0.01) out.push_back(r);
    return out;
  }
  // The fill of the rectangle whose top left corner is `at` (to a hundredth), or an invalid colour.
  QColor fillAt(QPointF at, QSizeF size) const {
    for (const SvgRect& r : ofSize(size))
      if (std::abs(r.rect.left() - at.x()) < 0.01 && std::abs(r.rect.top() - at.y()) < 0.01) return r.fill;
    return {};
  }
};

inline SvgContents readSvg(const QString& file) {
  SvgContents out;
  QFile in(file);
  if (!in.open(QIODevice::ReadOnly)) {
    out.error = "cannot open " + file;
    return out;
  }
  struct Group {
    QColor fill;
    QPointF shift;
  };
  std::vector<Group> groups{{}};
  static const QRegularExpression matrix(QStringLiteral("matrix\\(([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^)]+)\\)"));
  QXmlStreamReader xml(&in);
  while (!xml.atEnd()) {
    xml.readNext();
    if (xml.isStartElement()) {
      const QXmlStreamAttributes a = xml.attributes();
      if (xml.name() == QLatin1String("g")) {
        Group g = groups.back();
        if (a.hasAttribute("fill")) g.fill = QColor(a.value("fill").toString());
        if (const auto m = matrix.match(a.value("transform").toString()); m.hasMatch())
          g.shift = QPointF(m.captured(5).toDouble(), m.captured(6).toDouble());  // the views draw unscaled
        groups.push_back(g);
      } else if (xml.name() == QLatin1String("rect")) {
        const QColor fill = a.hasAttribute("fill") ? QColor(a.value("fill").toString()) : groups.back().fill;
        out.rects.push_back({QRectF(a.value("x").toDouble(), a.value("y").toDouble(), a.value("width").toDouble(),
                                    a.value("height").toDouble())
                                 .translated(groups.back().shift),
                             fill});
      } else if (xml.name() == QLatin1String("image")) {
        ++out.images;
      } else if (xml.name() == QLatin1String("text")) {
        out.texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
      }
    } else if (xml.isEndElement() && xml.name() == QLatin1String("g")) {
      groups.pop_back();
    }
  }
  if (xml.hasError()) out.error = xml.errorString();
  return out;
}

// Draws `widget` into an SVG file as File > Export does (view_export.cpp).
inline bool renderSvg(QWidget& widget, const QString& file) {
  QSvgGenerator svg;
  svg.setFileName(file);
  svg.setSize(widget.size());
  svg.setViewBox(QRect(QPoint(0, 0), widget.size()));
  QPainter painter;
  if (!painter.begin(&svg)) return false;
  widget.render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
  return painter.end();
}

}  // namespace attnlab::testing
