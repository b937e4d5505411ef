#pragma once
// The tours the app knows: every resources/tours/*.tour, embedded at build time (adding a file
// adds a tour; nothing else changes), parsed once. A malformed file is left out and its
// "file:line: reason" kept, so one bad tour never hides the others.
#include <QString>
#include <QStringList>
#include <vector>

#include "tour_file.h"

namespace attnlab {

struct TourLibrary {
  std::vector<Tour> tours;  // by file name
  QStringList errors;       // one "file:line: reason" per refused file

  const Tour* find(const QString& name) const;
};

// Every *.tour file in `dir` (a folder on disk, or ":/tours" for the embedded ones).
TourLibrary loadTours(const QString& dir);
// One tour file on disk (a teacher's own, tried without rebuilding): "" or "file:line: reason".
QString loadTourFile(const QString& path, Tour& out);
// The embedded tours, loaded on first use.
const TourLibrary& shippedTours();

}  // namespace attnlab
