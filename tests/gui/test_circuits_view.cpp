// The Circuits tab on a small random model: the pair check, a head patching sweep into the heatmap
// (one cell per layer and head), the lens table and DLA chart, a click selecting the head in the
// shared selection, and Cancel dropping a sweep's result.
#include <QtTest>

#include <QChartView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>

#include "../model_support.h"
#include "attention_map_model.h"
#include "circuits_model.h"
#include "circuits_tab.h"
#include "head_selection.h"
#include "patching_map.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {

std::shared_ptr<TraceSnapshot> snapshotOf(std::shared_ptr<const Model> model, std::shared_ptr<const Vocabulary> vocabulary) {
  auto modelSnapshot = std::make_shared<ModelSnapshot>();
  modelSnapshot->model = model;
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->vocabulary = vocabulary;
  snapshot->maxProbeLength = model->config().context;
  snapshot->trace = traceModel(*model, *vocabulary, {0, 1, 2, 3, 0, 1});
  snapshot->model = modelSnapshot;
  return snapshot;
}

}  // namespace

class TestCircuitsView : public QObject {
  Q_OBJECT

 private slots:
  void patchesAndSelects() {
    std::shared_ptr<const Model> model = testing::randomisedModel(testing::smallConfig("softmax", "rope", 6));
    auto vocabulary = std::make_shared<const Vocabulary>(std::vector<std::string>{"a", "b", "c", "d", "e", "f"}, Vocabulary::Level::Word);
    AttentionMapModel attention;
    attention.setTrace(snapshotOf(model, vocabulary));
    HeadSelection selection(&attention);
    CircuitsTab tab(ViewContext{&attention, &selection});
    tab.resize(1200, 800);
    tab.show();
    QVERIFY(!tab.runPair("a b c d", "a b e", "head_out").isEmpty());  // lengths differ
    QVERIFY(tab.runPair("a b c d a b", "a b e d a b", "head_out", "c", "e").isEmpty());
    tab.model()->job().waitForIdle();
    QCoreApplication::processEvents();
    QStringList labels;
    for (const QLabel* label : tab.findChildren<QLabel*>()) labels << label->text();
    QVERIFY2(tab.model()->result() != nullptr, qPrintable(labels.join(" | ")));
    const PatchingMap* map = tab.findChild<PatchingMap*>();
    QCOMPARE(map->effects().size(), size_t(2 * 4));
    QCOMPARE(tab.findChild<QTableWidget*>()->rowCount(), 3);  // residuals entering 2 blocks and the final one
    QVERIFY(tab.findChild<QChartView*>()->chart()->series().size() == 1);

    // Layer 1, head 2: row 1 of 2, column 2 of 4 of the grid right of the 64-pixel label margin.
    const QRectF grid(64, 8, map->width() - 72, map->height() - 56);
    const QPoint cell(static_cast<int>(grid.left() + grid.width() * 2.5 / 4), static_cast<int>(grid.top() + grid.height() * 1.5 / 2));
    QTest::mouseClick(const_cast<PatchingMap*>(map), Qt::LeftButton, {}, cell);
    QCOMPARE(selection.layer(), 1);
    QCOMPARE(selection.head(), 2);

    // A cancelled sweep delivers nothing: the shown result stays.
    const CircuitsResult* before = tab.model()->result();
    QVERIFY(tab.runPair("a b c d a b", "a b e d a b", "resid", "c", "e").isEmpty());
    tab.model()->cancel();
    tab.model()->job().waitForIdle();
    QCoreApplication::processEvents();
    QCOMPARE(tab.model()->result(), before);
  }
};

QTEST_MAIN(TestCircuitsView)
#include "test_circuits_view.moc"
