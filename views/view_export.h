#pragma once
// Export of any view: a picture (PNG, or SVG through QSvgGenerator) of what it draws, and its
// data as CSV. Each view says what to draw and which numbers it shows; the functions here write.
#include <QString>

class QMenu;
class QTextStream;
class QWidget;

namespace attnlab {

class ExportableView {
 public:
  virtual ~ExportableView() = default;
  virtual QString exportName() const = 0;   // file name stem, e.g. "attention-L2-H1"
  virtual QWidget* exportWidget() = 0;      // drawn into the PNG and SVG
  virtual bool hasExportData() const = 0;
  virtual void writeCsv(QTextStream& out) const = 0;  // header line, then one row per value
};

enum class ExportFormat { Png, Svg, Csv };

// Writes `view` to `file`; returns "" or a one-line reason.
QString exportView(ExportableView& view, ExportFormat format, const QString& file);
// Asks for a file name (suggesting exportName) and writes; reports a failure in a message box.
void exportViewInteractively(ExportableView& view, ExportFormat format, QWidget* parent);
// "Export as PNG... / SVG... / CSV..." entries for a view's context menu.
void addExportActions(QMenu* menu, ExportableView& view, QWidget* parent);

// CSV text field: quoted when it holds a comma, quote or line break.
QString csvField(const QString& text);

}  // namespace attnlab
