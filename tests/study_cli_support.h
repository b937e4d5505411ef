#pragma once
// What the study tests share: reading a study's files, splitting its CSV lines (quoted fields may
// hold commas, "" is a quote) and the report's "mean [low, high]" cell over two seeds.
#include <QtTest>

#include <algorithm>
#include <cmath>

inline QString readText(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

inline QStringList csvLines(const QString& path) { return readText(path).split('\n', Qt::SkipEmptyParts); }

inline QStringList csvFields(const QString& line) {
  QStringList fields{QString()};
  bool quoted = false;
  for (int i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.last() += line[++i];
    else if (line[i] == '"') quoted = !quoted;
    else if (line[i] == ',' && !quoted) fields << QString();
    else fields.last() += line[i];
  }
  return fields;
}

// The 95% t-interval of two seeds' values as the reports write it: t_{0.975,1} = 12.706, s = |a - b| / sqrt 2,
// cut at [lowest, highest] for a quantity that cannot leave them (a share, an accuracy: 0 to 1).
inline QString twoSeedCell(double a, double b, double lowest = 0, double highest = 1) {
  const double mean = (a + b) / 2, half = 12.706 * std::abs(a - b) / std::sqrt(2.0) / std::sqrt(2.0);
  return QString("%1 [%2, %3]").arg(mean, 0, 'f', 3).arg(std::max(lowest, mean - half), 0, 'f', 3).arg(std::min(highest, mean + half), 0, 'f', 3);
}
