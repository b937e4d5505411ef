// Tour files are shared between users, so a hostile one must be refused in one line, not crash:
// expressions nested 100,000 deep (brackets, "not", "!", "-") and operator chains 100,000 long,
// whose parse, evaluation and destruction would each recurse once per level.
#include <QTest>

#include "tour_expression.h"
#include "tour_file.h"

using namespace attnlab;

namespace {

std::string repeated(const std::string& piece, int times) {
  std::string text;
  for (int i = 0; i < times; ++i) text += piece;
  return text;
}

}  // namespace

class TestTourHostile : public QObject {
  Q_OBJECT
 private slots:
  void deepExpressionsAreRefused_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("brackets") << QString::fromStdString(repeated("(", 400) + "1" + repeated(")", 400)) << "nested deeper than 64 levels";
    QTest::newRow("not") << QString::fromStdString(repeated("not ", 200) + "1") << "nested deeper than 64 levels";
    QTest::newRow("!") << QString::fromStdString(repeated("!", 500) + "1") << "nested deeper than 64 levels";
    QTest::newRow("minus") << QString::fromStdString(repeated("-", 500) + "1") << "nested deeper than 64 levels";
    QTest::newRow("100,000 brackets") << QString::fromStdString(repeated("(", 100000) + "1" + repeated(")", 100000))
                                      << "characters long; at most 1000 are read";
    QTest::newRow("a chain 100,000 long") << QString::fromStdString("1" + repeated("+1", 100000))
                                          << "the expression is 200001 characters long; at most 1000 are read";
  }
  void deepExpressionsAreRefused() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    TourExpression e;
    const QString why = QString::fromStdString(TourExpression::parse(text.toStdString(), e));
    QVERIFY2(why.contains(expected), qPrintable(why.left(200)));
    QVERIFY(!why.contains('\n'));
  }

  // Nesting that real tours use still reads, and evaluates.
  void ordinaryNestingStillReads() {
    TourExpression e;
    QCOMPARE(QString::fromStdString(TourExpression::parse(repeated("(", 20) + "1 + 2" + repeated(")", 20) + " * -(-3)", e)), QString());
    QCOMPARE(e.evaluate({}), 9.0);
  }

  // In a tour file, the refusal names the file and line.
  void aHostileTourFileIsRefusedWithItsLine() {
    const std::string text = "# Hostile\n@summary s\n@duration d\n\n## Step\nText.\n@check " + repeated("!", 100000) + "1\n";
    Tour tour;
    const QString why = QString::fromStdString(parseTour(text, "hostile", "hostile.tour", tour));
    QVERIFY2(why.startsWith("hostile.tour:7: "), qPrintable(why.left(200)));
    QVERIFY(why.contains("at most 1000 are read"));
  }
};

QTEST_APPLESS_MAIN(TestTourHostile)
#include "test_tour_hostile.moc"
