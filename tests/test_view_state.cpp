// view_state.json (io/view_state.h): what the window showed around a saved experiment round-trips
// exactly, and a damaged file is refused with a one-line reason (the app then opens the folder
// with the default view settings and says so).
#include <QTemporaryDir>
#include <QtTest>

#include <string>

#include "io/view_state.h"

using namespace attnlab;

class TestViewState : public QObject {
  Q_OBJECT
 private slots:
  void roundTrips() {
    QTemporaryDir dir;
    const ViewState state{"kv", {5, 0, 7, 7}, 1, 3, true, "window", "25%"};
    QCOMPARE(QString::fromStdString(writeViewState(dir.path().toStdString(), state)), QString());
    ViewState read;
    bool found = false;
    QCOMPARE(QString::fromStdString(readViewState(dir.path().toStdString(), read, found)), QString());
    QVERIFY(found);
    QVERIFY(read == state);
    QTemporaryDir empty;
    ViewState untouched = state;
    QCOMPARE(QString::fromStdString(readViewState(empty.path().toStdString(), untouched, found)), QString());
    QVERIFY(!found);
    QVERIFY(untouched == state);
  }

  void damagedFilesAreRefused_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    const QString head = R"({"format": "attnlab-view-state-1", )";
    QTest::newRow("not JSON") << "{" << "not a view state";
    QTest::newRow("another format") << R"({"format": "attnlab-comparison-1"})" << "not a view state";
    QTest::newRow("probe of text") << head + R"("probe": ["a"]})" << "\"probe\" has the wrong type";
    QTest::newRow("negative head") << head + R"("selection": {"layer": 0, "head": -1}})" << "from 0";
    QTest::newRow("selection a list") << head + R"("selection": [1, 2]})" << "must be objects";
    QTest::newRow("colour scale") << head + R"("colour_scale": "rainbow"})" << "\"colour_scale\" must be";
    QTest::newRow("nested 100000 deep") << QString(100000, '[') << "deep";
  }
  void damagedFilesAreRefused() {
    QFETCH(QString, text);
    QFETCH(QString, reason);
    ViewState state{"attention", {1}, 0, 0, false, "", ""};
    const ViewState before = state;
    const QString why = QString::fromStdString(viewStateFromJson(text.toStdString(), state));
    QVERIFY2(why.contains(reason), qPrintable(why));
    QVERIFY(state == before);
  }
};

QTEST_GUILESS_MAIN(TestViewState)
#include "test_view_state.moc"
