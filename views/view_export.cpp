#include "view_export.h"

#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QSaveFile>
#include <QStandardPaths>
#include <QSvgGenerator>
#include <QTextStream>
#include <QWidget>

namespace attnlab {

namespace {

QString suffix(ExportFormat format) {
  switch (format) {
    case ExportFormat::Png: return QStringLiteral("png");
    case ExportFormat::Svg: return QStringLiteral("svg");
    case ExportFormat::Csv: return QStringLiteral("csv");
  }
  return {};
}

QString filter(ExportFormat format) {
  switch (format) {
    case ExportFormat::Png: return QObject::tr("PNG image (*.png)");
    case ExportFormat::Svg: return QObject::tr("SVG drawing (*.svg)");
    case ExportFormat::Csv: return QObject::tr("CSV table (*.csv)");
  }
  return {};
}

}  // namespace

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
  QString quoted = text;
  quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString exportView(ExportableView& view, ExportFormat format, const QString& file) {
  QWidget* widget = view.exportWidget();
  switch (format) {
    case ExportFormat::Png:
      // Device pixels: sharp on high-DPI screens.
      if (!widget->grab().save(file, "PNG")) return QObject::tr("could not write %1").arg(file);
      return {};
    case ExportFormat::Svg: {
      QSvgGenerator svg;
      svg.setFileName(file);
      svg.setSize(widget->size());
      svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
      svg.setTitle(view.exportName());
      svg.setDescription(QObject::tr("Exported by Attention Lab"));
      QPainter painter;
      if (!painter.begin(&svg)) return QObject::tr("could not write %1").arg(file);
      widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
      painter.end();
      if (QFileInfo(file).size() == 0) return QObject::tr("could not write %1").arg(file);
      return {};
    }
    case ExportFormat::Csv: {
      if (!view.hasExportData()) return QObject::tr("there is no data to export yet (start training first)");
      QSaveFile out(file);
      if (!out.open(QIODevice::WriteOnly | QIODevice::Text)) return QObject::tr("could not write %1: %2").arg(file, out.errorString());
      QTextStream stream(&out);
      view.writeCsv(stream);
      stream.flush();
      if (!out.commit()) return QObject::tr("could not write %1: %2").arg(file, out.errorString());
      return {};
    }
  }
  return {};
}

void exportViewInteractively(ExportableView& view, ExportFormat format, QWidget* parent) {
  if (format == ExportFormat::Csv && !view.hasExportData()) {
    QMessageBox::information(parent, QObject::tr("Export"), QObject::tr("There is no data to export yet: start training first."));
    return;
  }
  const QString folder = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
  const QString suggested = QDir(folder.isEmpty() ? QDir::homePath() : folder).filePath(view.exportName() + QLatin1Char('.') + suffix(format));
  QString file = QFileDialog::getSaveFileName(parent, QObject::tr("Export %1").arg(view.exportName()), suggested, filter(format));
  if (file.isEmpty()) return;
  if (QFileInfo(file).suffix().isEmpty()) file += QLatin1Char('.') + suffix(format);
  const QString error = exportView(view, format, file);
  if (!error.isEmpty()) QMessageBox::warning(parent, QObject::tr("Export failed"), error);
}

void addExportActions(QMenu* menu, ExportableView& view, QWidget* parent) {
  menu->addAction(QObject::tr("Export as PNG..."), parent, [&view, parent] { exportViewInteractively(view, ExportFormat::Png, parent); });
  menu->addAction(QObject::tr("Export as SVG..."), parent, [&view, parent] { exportViewInteractively(view, ExportFormat::Svg, parent); });
  menu->addAction(QObject::tr("Export data as CSV..."), parent, [&view, parent] { exportViewInteractively(view, ExportFormat::Csv, parent); });
}

}  // namespace attnlab
