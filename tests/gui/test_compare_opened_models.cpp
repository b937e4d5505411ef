// The comparison window with models opened from folders: New Comparison adds model folders; two
// folders with one tokenizer share the probe side by side (their own layers, one probe edit for
// both); one folder twice shows the same model under two KV policies; nothing trains; a saved
// comparison names the folders and opens them again.
#include <QDialogButtonBox>
#include <QDir>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "../tiny_hf_folder.h"
#include "attention_map_model.h"
#include "comparison_pane.h"
#include "comparison_window.h"
#include "kv_cache_model.h"
#include "kv_cache_view.h"
#include "new_comparison_dialog.h"
#include "next_token_model.h"
#include "next_token_view.h"
#include "probe_editor.h"
#include "tiny_experiment.h"
#include "view_kind.h"

using namespace attnlab;

namespace {
bool allOpened(const ComparisonWindow& w) {
  for (int i = 0; i < w.paneCount(); ++i)
    if (!w.pane(i)->session()->hasOpenedModel() || !w.pane(i)->attention()->snapshot()) return false;
  return true;
}
}  // namespace

class CompareOpenedModelsTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void twoFoldersShareTheProbe() {
    const QString a = tmp_.filePath("small-a"), b = tmp_.filePath("deeper-b");
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(a.toStdString(), 2, 2, 16)), QString());
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(b.toStdString(), 3, 2, 16)), QString());

    NewComparisonDialog dialog(testing::tinyConfig(3));
    dialog.list()->item(0)->setCheckState(Qt::Unchecked);  // not the current experiment
    dialog.addModelFolder(a);
    dialog.addModelFolder(b);
    QVERIFY(dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
    QCOMPARE(dialog.chosen().size(), size_t(2));
    QCOMPARE(dialog.chosenFolders(), (QStringList{a, b}));

    ComparisonWindow window(dialog.chosen(), nullptr, dialog.chosenFolders());
    window.show();
    QVERIFY(QTest::qWaitFor([&] { return allOpened(window); }, 60000));
    QCOMPARE(window.pane(0)->attention()->layerCount(), 2);
    QCOMPARE(window.pane(1)->attention()->layerCount(), 3);
    QVERIFY2(window.pane(1)->headerText().contains(QStringLiteral("deeper-b")), qPrintable(window.pane(1)->headerText()));
    QVERIFY(!window.pane(1)->headerText().contains(QStringLiteral("step")));
    QCOMPARE(window.probeNote(), QString());  // one tokenizer: one probe

    const std::vector<int> first = window.pane(0)->attention()->snapshot()->trace.tokens;
    QCOMPARE(window.probeEditor()->submit(QStringLiteral("we wow a woe")), QString());
    const auto same = [&] {
      const auto* x = window.pane(0)->attention()->snapshot();
      const auto* y = window.pane(1)->attention()->snapshot();
      return x && y && x->trace.tokens == y->trace.tokens && x->trace.tokens != first;
    };
    QVERIFY(QTest::qWaitFor(same, 30000));

    // Train all leaves opened models as they are.
    window.trainAll();
    QCOMPARE(window.pane(0)->session()->state(), TrainingSession::State::Finished);

    // Every run shows its own next-token distribution for the shared probe.
    window.setViewKind(viewKindIndex(QStringLiteral("predictions")));
    for (int i = 0; i < 2; ++i) {
      auto* view = qobject_cast<NextTokenView*>(window.pane(i)->viewInstance().widget);
      QVERIFY(view);
      view->settle();
      QVERIFY(view->model()->prediction());
      QCOMPARE(view->model()->prediction()->position, static_cast<int>(window.pane(i)->attention()->snapshot()->trace.tokens.size()) - 1);
    }
    QVERIFY(window.pane(0)->viewInstance().widget != window.pane(1)->viewInstance().widget);

    // Saved, the comparison names the folders; opened again, it shows the same models on the same probe.
    const std::vector<int> probe = window.pane(0)->attention()->snapshot()->trace.tokens;
    QSignalSpy saved(&window, &ComparisonWindow::savedAs);
    const QString file = tmp_.filePath("cmp.attnlab-compare");
    window.saveAs(file);
    QVERIFY(QTest::qWaitFor([&] { return saved.count() == 1; }, 30000));
    QCOMPARE(saved.first().at(1).toString(), QString());
    QString error;
    std::unique_ptr<ComparisonWindow> again(ComparisonWindow::open(file, error));
    QVERIFY2(again, qPrintable(error));
    again->show();
    QVERIFY(QTest::qWaitFor([&] { return allOpened(*again); }, 60000));
    QCOMPARE(again->pane(1)->modelFolder(), b);
    QCOMPARE(again->pane(1)->attention()->layerCount(), 3);
    QVERIFY(QTest::qWaitFor([&] { return again->pane(0)->attention()->snapshot()->trace.tokens == probe &&
                                         again->pane(1)->attention()->snapshot()->trace.tokens == probe; }, 30000));

    // A folder that is gone is named, and nothing opens.
    QVERIFY(QDir(b).removeRecursively());
    std::unique_ptr<ComparisonWindow> missing(ComparisonWindow::open(file, error));
    QVERIFY(!missing);
    QVERIFY2(error.contains(QStringLiteral("deeper-b")) && error.contains(QStringLiteral("run 2")), qPrintable(error));
  }

  void oneModelUnderTwoPolicies() {
    const QString dir = tmp_.filePath("one");
    QCOMPARE(QString::fromStdString(tiny_hf::writeLlamaFolder(dir.toStdString())), QString());
    ComparisonWindow window({testing::tinyConfig(3), testing::tinyConfig(3)}, nullptr, {dir, dir});
    window.show();
    QVERIFY(QTest::qWaitFor([&] { return allOpened(window); }, 60000));
    window.setViewKind(viewKindIndex(QStringLiteral("kv")));
    const char* policies[] = {"window", "h2o"};
    for (int i = 0; i < 2; ++i) {
      auto* view = qobject_cast<KvCacheView*>(window.pane(i)->viewInstance().widget);
      QVERIFY(view);
      view->settle();
      QCOMPARE(view->setEviction(policies[i], QStringLiteral("4")), QString());
      view->run();
      view->settle();
      QVERIFY2(view->model()->result(), qPrintable(view->model()->message()));
      QCOMPARE(QString::fromStdString(view->model()->result()->record.runs[0].spec.policy), QString(policies[i]));
    }
    const auto* k0 = qobject_cast<KvCacheView*>(window.pane(0)->viewInstance().widget)->model()->result().get();
    const auto* k1 = qobject_cast<KvCacheView*>(window.pane(1)->viewInstance().widget)->model()->result().get();
    QCOMPARE(k0->record.promptLength, k1->record.promptLength);  // the same probe
    // Both keep 4 per head, but not the same entries: their rasters differ somewhere.
    bool differ = false;
    for (size_t h = 0; h < k0->record.runs[0].heads.size(); ++h) differ |= k0->record.runs[0].heads[h].cells != k1->record.runs[0].heads[h].cells;
    QVERIFY(differ);
  }
};

QTEST_MAIN(CompareOpenedModelsTest)
#include "test_compare_opened_models.moc"
