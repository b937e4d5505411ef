#include "tour_library.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "main_window.h"

namespace attnlab {

const Tour* TourLibrary::find(const QString& name) const {
  for (const Tour& t : tours)
    if (QString::fromStdString(t.name) == name) return &t;
  return nullptr;
}

TourLibrary loadTours(const QString& dir) {
  std::vector<std::string> views;
  for (const QString& v : MainWindow::viewNames()) views.push_back(v.toStdString());
  TourLibrary library;
  const QFileInfoList files = QDir(dir).entryInfoList({QStringLiteral("*.tour")}, QDir::Files, QDir::Name);
  for (const QFileInfo& info : files) {
    QFile file(info.filePath());
    if (!file.open(QIODevice::ReadOnly)) {
      library.errors << QStringLiteral("%1: cannot be read (%2)").arg(info.fileName(), file.errorString());
      continue;
    }
    Tour tour;
    const std::string why = parseTour(file.readAll().toStdString(), info.completeBaseName().toStdString(),
                                      info.fileName().toStdString(), tour, views);
    if (why.empty()) library.tours.push_back(std::move(tour));
    else library.errors << QString::fromStdString(why);
  }
  return library;
}

const TourLibrary& shippedTours() {
  static const TourLibrary library = loadTours(QStringLiteral(":/tours"));
  return library;
}

}  // namespace attnlab
