#pragma once
// A report folder written by `attnlab-cli study live-cache` (report.md, results.csv and other
// CSVs, charts/*.png), browsable: the markdown with its images in a text browser, each CSV as a
// table.
#include <QDialog>
#include <QString>

class QTabWidget;

namespace attnlab {

class KvStudyReport : public QDialog {
  Q_OBJECT
 public:
  explicit KvStudyReport(QWidget* parent = nullptr);
  // Loads `folder`; returns "" or a one-line reason (no report.md there, unreadable file).
  QString load(const QString& folder);
  QTabWidget* tabs() const { return tabs_; }

  // One CSV line split into fields (quoted fields may hold commas and doubled quotes).
  static QStringList splitCsvLine(const QString& line);

 private:
  QTabWidget* tabs_;
};

}  // namespace attnlab
