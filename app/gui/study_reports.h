#pragma once
// Opening study reports in the app: File > Open Study Report, and the tours' report:NAME links.
// A study's folder is looked for where its report would be: under the folder the user last chose,
// beside the installed app (share/attnlab/reports), and in the source tree's docs/reports.
#include <QString>
#include <QStringList>

class QWidget;

namespace attnlab {

// Where NAME's report folder may be, in the order they are tried.
QStringList studyReportCandidates(const QString& name);
// The first candidate holding report.md, or "".
QString findStudyReport(const QString& name);
// Opens `folder` in a report window; says why in a message box when it cannot. Remembers the folder.
void showStudyReport(QWidget* parent, const QString& folder);
// File > Open Study Report: asks for a folder, then shows it.
void openStudyReportWithDialog(QWidget* parent);
// A tour's report:NAME link: the report found for NAME, or a message naming the command that writes
// it and offering to choose its folder.
void openNamedStudyReport(QWidget* parent, const QString& name);

}  // namespace attnlab
