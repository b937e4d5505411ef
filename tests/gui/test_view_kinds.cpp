// The view table (view_kinds.cpp): every registered kind is complete, documented in the user guide
// and can be made from a bare context, so a new row is checked the moment it is added.
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

#include "attention_map_model.h"
#include "head_selection.h"
#include "loss_history_model.h"
#include "training_session.h"
#include "view_kind.h"

using namespace attnlab;

class ViewKindsTest : public QObject {
  Q_OBJECT
 private slots:
  void everyKindIsComplete() {
    QSet<QString> ids;
    for (const ViewKind& kind : viewKinds()) {
      QVERIFY2(QRegularExpression(QStringLiteral("^[a-z][a-z0-9_]*$")).match(kind.id).hasMatch(), qPrintable(kind.id));
      QVERIFY2(!ids.contains(kind.id), qPrintable(QStringLiteral("%1 is registered twice").arg(kind.id)));
      ids << kind.id;
      QVERIFY2(!kind.title.isEmpty() && !kind.menuText.isEmpty() && !kind.toolTip.isEmpty(), qPrintable(kind.id));
      QVERIFY2(kind.make, qPrintable(kind.id));
      QCOMPARE(viewKindIndex(kind.id), static_cast<int>(ids.size()) - 1);
    }
    QCOMPARE(viewKindIndex(QStringLiteral("no_such_view")), -1);
  }

  void everyKindHasAGuideSection() {
    QFile guide(QStringLiteral(":/guide/guide.md"));
    QVERIFY(guide.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(guide.readAll());
    QStringList headings;
    for (const QRegularExpressionMatch& m : QRegularExpression(QStringLiteral("^#+ (.+)$"), QRegularExpression::MultilineOption).globalMatch(text))
      headings << m.captured(1).trimmed();
    for (const ViewKind& kind : viewKinds())
      QVERIFY2(headings.contains(kind.guideSection),
               qPrintable(QStringLiteral("view '%1' has no section \"%2\" in resources/guide/guide.md").arg(kind.id, kind.guideSection)));
  }

  // Before any training: each kind is made, shown and says it has nothing to export yet.
  void everyKindIsMadeFromABareContext() {
    for (const bool compact : {false, true}) {
      AttentionMapModel attention;
      HeadSelection selection(&attention);
      TrainingSession session;
      LossHistoryModel history;
      history.setPlannedSteps(600);
      for (const ViewKind& kind : viewKinds()) {
        QWidget parent;
        const ViewInstance made = kind.make(ViewContext{&attention, &selection, &session, &history, compact}, &parent);
        QVERIFY2(made.widget && made.widget->parent() == &parent, qPrintable(kind.id));
        parent.resize(800, 600);
        parent.show();
        QCoreApplication::processEvents();
        if (made.exportable) QVERIFY2(!made.exportable->hasExportData(), qPrintable(kind.id));
        if (made.settle) made.settle();  // nothing to wait for: returns
      }
    }
  }
};

QTEST_MAIN(ViewKindsTest)
#include "test_view_kinds.moc"
