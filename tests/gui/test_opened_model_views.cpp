// Long maps' block-max thumbnails; and every view on a model opened from a Hugging Face folder (a tiny random gpt2 and llama): each
// tab shows and settles; no caption speaks of a training step, they name the model; the head
// table's diagnostics and importance are on the user's probe (the shown loss is the probe's own
// next-token loss); the KV cache runs every eviction policy on the probe, and the full cache's
// teacher-forced loss per position equals the forward pass's on the same text.
#include <QLabel>
#include <QTabBar>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "../tiny_hf_folder.h"
#include "attention_map_model.h"
#include "head_table_model.h"
#include "head_table_view.h"
#include "hf/hf_model.h"
#include "kv_cache_model.h"
#include "colormap.h"
#include "main_window.h"
#include "map_image.h"
#include "model/workspace.h"
#include "probe_editor.h"
#include "tiny_experiment.h"
#include "training_session.h"

using namespace attnlab;

namespace {

// -log p(t+1 | ..t) per position from one forward pass (NaN for the last).
std::vector<double> forwardLosses(const Model& model, const std::vector<int>& tokens) {
  auto ws = makeWorkspace();
  const std::vector<int> none(tokens.size(), -1);
  model.forward(*ws, tokens.data(), none.data(), 1, static_cast<int>(tokens.size()));
  const Mat& z = workspaceLogits(*ws);
  std::vector<double> out;
  for (size_t t = 0; t + 1 < tokens.size(); ++t) {
    double peak = z.row(t).maxCoeff(), sum = 0;
    for (int v = 0; v < z.cols(); ++v) sum += std::exp(z(t, v) - peak);
    out.push_back(std::log(sum) + peak - z(t, tokens[t + 1]));
  }
  return out;
}

QStringList captions(QWidget& root) {
  QStringList out;
  for (QLabel* label : root.findChildren<QLabel*>())
    if (label->isVisible()) out << label->text();
  return out;
}

}  // namespace

class OpenedModelViewsTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  // A long map's thumbnail: each pixel is its block's largest visible weight; masked only where the whole block is.
  void longMapThumbnail() {
    const int n = 300, side = 30, block = 10;
    auto snapshot = std::make_shared<TraceSnapshot>();
    HeadTrace head;
    head.weights = Mat::Zero(n, n);
    head.scores = Mat::Constant(n, n, -std::numeric_limits<float>::infinity());
    for (int q = 0; q < n; ++q)
      for (int k = 0; k <= q; ++k) {
        head.scores(q, k) = 0;
        head.weights(q, k) = static_cast<float>((q * 7 + k * 13) % 101) / 100.f;
      }
    snapshot->trace.tokens.assign(n, 1);
    snapshot->trace.layers.push_back({"softmax", {head}, {}});
    AttentionMapModel map;
    map.setTrace(snapshot);
    const QImage image = mapThumbnail(map, 0, 0, side);
    QCOMPARE(image.width(), side);
    const double top = map.maxWeight(0, 0);
    for (int by = 0; by < side; ++by)
      for (int bx = 0; bx < side; ++bx) {
        float peak = -1;
        for (int q = by * block; q < (by + 1) * block; ++q)
          for (int k = bx * block; k < (bx + 1) * block && k <= q; ++k) peak = std::max(peak, head.weights(q, k));
        const QRgb expected = peak < 0 ? kMaskedColour : rampColor(map.rampPosition(peak, top)).rgb();
        QCOMPARE(image.pixel(bx, by), expected);
      }
  }

  void everyView_data() {
    QTest::addColumn<QString>("architecture");
    QTest::newRow("gpt2") << QStringLiteral("gpt2");
    QTest::newRow("llama") << QStringLiteral("llama");
  }

  void everyView() {
    QFETCH(QString, architecture);
    const std::string dir = tmp_.path().toStdString() + "/tiny-" + architecture.toStdString();
    const std::string why = architecture == "gpt2" ? tiny_hf::writeGpt2Folder(dir, 2, 2, 16) : tiny_hf::writeLlamaFolder(dir);
    QCOMPARE(QString::fromStdString(why), QString());
    std::unique_ptr<Model> reference;
    hf::HfModelInfo info;
    QCOMPARE(QString::fromStdString(hf::openHfModel(dir, reference, info)), QString());

    MainWindow w(testing::tinyConfig(3), QStringLiteral("default"));
    w.resize(1400, 900);
    w.show();
    w.openModelFolder(QString::fromStdString(dir));
    QVERIFY(QTest::qWaitFor([&] { return w.session().hasOpenedModel() && w.attentionMap().snapshot(); }, 60000));
    const std::vector<int> first = w.attentionMap().snapshot()->trace.tokens;
    // The user's text replaces the first probe.
    QCOMPARE(w.probeEditor()->submit(QStringLiteral("a wow, we woke")), QString());
    QVERIFY(QTest::qWaitFor([&] { return w.attentionMap().snapshot()->trace.tokens != first; }, 30000));
    const std::vector<int> probe = w.attentionMap().snapshot()->trace.tokens;
    QVERIFY(probe.size() >= 8);
    QCOMPARE(w.attentionMap().stageText(), QStringLiteral("tiny-%1").arg(architecture));

    for (int v = 0; v < w.tabs()->count(); ++v) {
      w.showView(v);
      QApplication::processEvents();
      w.settleView(v);
      QApplication::processEvents();
      for (const QString& text : captions(w))
        QVERIFY2(!text.contains(QStringLiteral("step 0")) && !text.contains(QStringLiteral("after step")),
                 qPrintable(QStringLiteral("%1 view: \"%2\"").arg(w.tabs()->tabText(v), text)));
    }

    // Head table: diagnostics on the probe, importance's loss is the probe's next-token loss.
    w.showView(QStringLiteral("diagnostics"));
    auto* table = w.view<HeadTableView>();
    table->settle();
    HeadTableModel* heads = table->tableModel();
    QVERIFY(heads->onOpenedModel());
    QCOMPARE(heads->probeLength(), static_cast<int>(probe.size()));
    for (int row = 0; row < heads->rowCount(); ++row) {
      QVERIFY(heads->data(heads->index(row, HeadTableModel::Entropy), HeadTableModel::SortRole).isValid());
      QVERIFY(heads->data(heads->index(row, HeadTableModel::Induction), HeadTableModel::SortRole).isValid());
      QVERIFY(heads->data(heads->index(row, HeadTableModel::Ablation), HeadTableModel::SortRole).isValid());
    }
    const std::vector<double> losses = forwardLosses(*reference, probe);
    double mean = 0;
    for (double l : losses) mean += l / losses.size();
    QVERIFY(heads->importance());
    QVERIFY2(std::abs(heads->importance()->shown.loss - mean) < 1e-4 * std::max(1.0, mean),
             qPrintable(QStringLiteral("%1 vs %2").arg(heads->importance()->shown.loss).arg(mean)));
    QVERIFY(captions(*table).join(' ').contains(QStringLiteral("on the probe")));

    // KV cache: every policy on the probe; the full cache's teacher-forced losses are the forward pass's.
    KvCacheModel kv;
    for (const auto& [policy, summary] : KvCacheModel::policies()) {
      KvCacheRequest request;
      request.model = w.attentionMap().snapshot()->model;
      request.probe = probe;
      request.tokens = 2;
      request.runs = {{"full", "", "head"}, {policy.toStdString(), policy == "full" ? "" : "4", "head"}};
      QSignalSpy failed(&kv, &KvCacheModel::failed);
      kv.run(request);
      kv.waitForIdle();
      QApplication::processEvents();
      if (policy == QLatin1String("learned_gate")) {  // this model has no learned gate: refused in one line
        QCOMPARE(failed.count(), 1);
        QVERIFY(!kv.message().contains('\n'));
        continue;
      }
      QVERIFY2(failed.isEmpty(), qPrintable(policy + ": " + kv.message()));
      const OccupancyRecord& r = kv.result()->record;
      QCOMPARE(r.promptLength, static_cast<int>(probe.size()));
      for (size_t t = 0; t < losses.size(); ++t) {
        QVERIFY2(std::abs(r.runs[0].loss[t] - losses[t]) < 1e-3, qPrintable(QStringLiteral("position %1").arg(t)));
        QVERIFY(std::isfinite(r.runs[1].loss[t]));
      }
      if (policy != QLatin1String("full")) QVERIFY2(r.runs[1].liveEntries.back() < r.runs[0].liveEntries.back(), qPrintable(policy));
      QVERIFY(kv.result()->openedName.contains(QStringLiteral("tiny-")));
    }
  }
};

QTEST_MAIN(OpenedModelViewsTest)
#include "test_opened_model_views.moc"
