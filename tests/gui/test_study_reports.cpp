// The study report window and the tours' links to it: a `study all` folder opens on its index, a
// link to a study's report.md opens that study in the same window (its CSVs as tables) and Back
// returns; a folder without report.md is refused and what was shown stays; reports are found under
// the folder last chosen; every report:NAME link of the shipped tours names a study the CLI runs.
#include <QtTest>

#include <QDirIterator>
#include <QPushButton>
#include <QSettings>
#include <QTableWidget>
#include <QTextBrowser>

#include "study_report.h"
#include "study_reports.h"

using namespace attnlab;

namespace {

void writeFile(const QString& path, const QByteArray& text) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(text);
}

QString shownText(const StudyReport& report) {
  auto* browser = qobject_cast<QTextBrowser*>(report.tabs()->widget(0));
  return browser ? browser->toPlainText() : QString();
}

}  // namespace

class TestStudyReports : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QCoreApplication::setOrganizationName("attnlab-test-study-reports");
    QSettings().clear();
  }

  void linksOpenTheStudyAndBackReturns() {
    QTemporaryDir tmp;
    const QString all = tmp.filePath("all");
    writeFile(all + "/report.md", "# Index\n\n| study |\n|---|\n| [sinks](sinks/report.md) |\n");
    writeFile(all + "/findings.csv", "study,finding,paper,measured,verdict\nsinks,a,b,\"0.1 [0.0, 0.2]\",partly\n");
    writeFile(all + "/sinks/report.md", "# Sinks study\n\nSome text.\n");
    writeFile(all + "/sinks/results.csv", "model,seed,share\nsoftmax,1,0.25\nsoftmax,2,0.5\n");
    StudyReport report;
    QCOMPARE(report.load(all), QString());
    QVERIFY(shownText(report).contains("Index"));
    QVERIFY(!report.backButton()->isEnabled());
    auto* index = qobject_cast<QTableWidget*>(report.tabs()->widget(1));
    QVERIFY(index);
    QCOMPARE(index->item(0, 3)->text(), QString("0.1 [0.0, 0.2]"));  // a quoted field keeps its commas

    report.follow(QUrl("sinks/report.md"));
    QCOMPARE(report.folder(), QDir(all + "/sinks").absolutePath());
    QVERIFY(shownText(report).contains("Sinks study"));
    QCOMPARE(report.tabs()->tabText(1), QString("results.csv"));
    auto* results = qobject_cast<QTableWidget*>(report.tabs()->widget(1));
    QCOMPARE(results->rowCount(), 2);
    QCOMPARE(results->item(1, 2)->data(Qt::DisplayRole).toDouble(), 0.5);
    QVERIFY(report.backButton()->isEnabled());

    report.backButton()->click();
    QCOMPARE(report.folder(), QDir(all).absolutePath());
    QVERIFY(shownText(report).contains("Index"));
    QVERIFY(!report.backButton()->isEnabled());

    // No report.md: refused with the reason, and the index stays shown.
    QVERIFY(report.load(tmp.filePath("nothing")).contains("holds no report.md"));
    QCOMPARE(report.folder(), QDir(all).absolutePath());
    QVERIFY(shownText(report).contains("Index"));
  }

  void reportsAreFoundUnderTheFolderLastChosen() {
    QTemporaryDir tmp;
    writeFile(tmp.filePath("all/phase-change/report.md"), "# Phase change\n");
    QSettings().setValue("studyReports/lastFolder", tmp.filePath("all"));
    QCOMPARE(findStudyReport("phase-change"), QDir(tmp.filePath("all/phase-change")).absolutePath());
    QSettings().setValue("studyReports/lastFolder", tmp.filePath("all/phase-change"));  // a study's own folder: its siblings
    writeFile(tmp.filePath("all/sinks/report.md"), "# Sinks\n");
    QCOMPARE(findStudyReport("sinks"), QDir(tmp.filePath("all/sinks")).absolutePath());
    QSettings().clear();
    QCOMPARE(findStudyReport("no-such-study"), QString());
  }

  void everyTourLinkNamesAStudy() {
    QProcess cli;
    cli.start(QCoreApplication::applicationDirPath() + "/attnlab-cli", {"study"});
    QVERIFY(cli.waitForFinished(60000));
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    const QString known = err.section("known: ", 1).section(')', 0, 0);
    QVERIFY2(!known.isEmpty(), qPrintable(err));
    const QStringList studies = known.split(", ");
    int links = 0;
    QDirIterator it(ATTNLAB_TOURS, {"*.tour"});
    const QRegularExpression link(R"(\]\(report:([^)]*)\))");
    while (it.hasNext()) {
      QFile file(it.next());
      QVERIFY(file.open(QIODevice::ReadOnly));
      const QString text = QString::fromUtf8(file.readAll());
      for (auto m = link.globalMatch(text); m.hasNext(); ++links) {
        const QString name = m.next().captured(1);
        QVERIFY2(studies.contains(name), qPrintable(it.fileName() + " links report:" + name + ", not a study (" + known + ")"));
      }
    }
    QVERIFY(links >= 7);
  }
};

QTEST_MAIN(TestStudyReports)
#include "test_study_reports.moc"
