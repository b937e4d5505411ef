#include "study_reports.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>

#include "study_report.h"

namespace attnlab {
namespace {
const char* kLastFolderKey = "studyReports/lastFolder";
}

QStringList studyReportCandidates(const QString& name) {
  QStringList candidates;
  const QString last = QSettings().value(kLastFolderKey).toString();
  if (!last.isEmpty()) {
    candidates << QDir(last).filePath(name);                          // the folder of a `study all` run
    candidates << QDir(QFileInfo(last).absolutePath()).filePath(name);  // a sibling of the study last opened
  }
  candidates << QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("../share/attnlab/reports/") + name);
#ifdef ATTNLAB_SOURCE_REPORTS
  candidates << QDir(QStringLiteral(ATTNLAB_SOURCE_REPORTS)).filePath(name);
#endif
  return candidates;
}

QString findStudyReport(const QString& name) {
  for (const QString& folder : studyReportCandidates(name))
    if (QFileInfo::exists(QDir(folder).filePath(QStringLiteral("report.md")))) return QDir(folder).absolutePath();
  return {};
}

void showStudyReport(QWidget* parent, const QString& folder) {
  auto* dialog = new StudyReport(parent);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  if (const QString why = dialog->load(folder); !why.isEmpty()) {
    delete dialog;
    QMessageBox::warning(parent, QObject::tr("Study report"), why);
    return;
  }
  QSettings().setValue(kLastFolderKey, QDir(folder).absolutePath());
  dialog->show();
}

void openStudyReportWithDialog(QWidget* parent) {
  const QString folder = QFileDialog::getExistingDirectory(
      parent, QObject::tr("Open a study report folder (attnlab-cli study NAME --out DIR)"), QSettings().value(kLastFolderKey).toString());
  if (!folder.isEmpty()) showStudyReport(parent, folder);
}

void openNamedStudyReport(QWidget* parent, const QString& name) {
  if (const QString folder = findStudyReport(name); !folder.isEmpty()) return showStudyReport(parent, folder);
  QMessageBox box(QMessageBox::Information, QObject::tr("Study report"),
                  QObject::tr("No report of the %1 study was found. Run it with\n\n    attnlab-cli study %1 --out DIR\n\n"
                              "(or attnlab-cli study all --out DIR for every study), then choose DIR.")
                      .arg(name),
                  QMessageBox::Cancel, parent);
  QPushButton* choose = box.addButton(QObject::tr("Choose Folder\u2026"), QMessageBox::AcceptRole);
  box.exec();
  if (box.clickedButton() == choose) openStudyReportWithDialog(parent);
}

}  // namespace attnlab
