#include "tour_library.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>

#include "main_window.h"
#include "view_kind.h"

namespace attnlab {

const Tour* TourLibrary::find(const QString& name) const {
  for (const Tour& t : tours)
    if (QString::fromStdString(t.name) == name) return &t;
  return nullptr;
}

QString loadTourFile(const QString& path, Tour& out) {
  const QFileInfo info(path);
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return QStringLiteral("%1: cannot be read (%2)").arg(info.fileName(), file.errorString());
  std::vector<std::string> views;
  for (const QString& v : viewKindIds()) views.push_back(v.toStdString());
  return QString::fromStdString(parseTour(file.readAll().toStdString(), info.completeBaseName().toStdString(),
                                          info.fileName().toStdString(), out, views));
}

TourLibrary loadTours(const QString& dir) {
  TourLibrary library;
  const QFileInfoList files = QDir(dir).entryInfoList({QStringLiteral("*.tour")}, QDir::Files, QDir::Name);
  for (const QFileInfo& info : files) {
    Tour tour;
    const QString why = loadTourFile(info.filePath(), tour);
    if (why.isEmpty()) library.tours.push_back(std::move(tour));
    else library.errors << why;
  }
  std::stable_sort(library.tours.begin(), library.tours.end(), [](const Tour& a, const Tour& b) { return a.order < b.order; });
  return library;
}

const TourLibrary& shippedTours() {
  static const TourLibrary library = loadTours(QStringLiteral(":/tours"));
  return library;
}

}  // namespace attnlab
