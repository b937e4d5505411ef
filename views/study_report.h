#pragma once
// A report folder written by `attnlab-cli study NAME` (report.md, results.csv and other CSVs,
// charts/*.png), browsable: the markdown with its images in a text browser, each CSV as a sortable
// table. A link to another study's report.md (as the index of `study all` has) opens that folder
// in the same window; Back returns.
#include <QDialog>
#include <QString>
#include <QStringList>

class QPushButton;
class QTabWidget;
class QUrl;

namespace attnlab {

class StudyReport : public QDialog {
  Q_OBJECT
 public:
  explicit StudyReport(QWidget* parent = nullptr);
  // Loads `folder`; returns "" or a one-line reason (no report.md there, unreadable file). The
  // folder shown before stays on the Back list.
  QString load(const QString& folder);
  QString folder() const { return history_.isEmpty() ? QString() : history_.last(); }
  QTabWidget* tabs() const { return tabs_; }
  QPushButton* backButton() const { return back_; }
  // What a click on `link` in the report does: another report opens here, anything else outside.
  void follow(const QUrl& link);

  // One CSV line split into fields (quoted fields may hold commas and doubled quotes).
  static QStringList splitCsvLine(const QString& line);

 private:
  QString display(const QString& folder);
  void back();

  QTabWidget* tabs_;
  QPushButton* back_;
  QStringList history_;  // folders shown, the current one last
};

}  // namespace attnlab
