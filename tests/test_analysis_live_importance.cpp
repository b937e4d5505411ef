// Head importance on the model as a view shows it (analysis/live_head_importance.h): with every head on it is
// the engine's own report; with a head off, that head's number is the loss it would recover, the
// other heads are measured with it off, and the curves start from the shown model.
#include <QtTest>

#include <cmath>

#include "analysis/analysis.h"
#include "analysis/live_head_importance.h"
#include "io/config_json.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
ExperimentConfig tinyInduction() {
  ExperimentConfig c;
  if (std::string why = loadPreset("induction", c); !why.empty()) qFatal("%s", why.c_str());
  for (const char* o : {"model.d_model=32", "model.n_heads=2", "model.context=24", "task.settings.length=10", "train.batch=4"})
    if (std::string bad = applyOverride(c, o); !bad.empty()) qFatal("%s", bad.c_str());
  return c;
}

double lossWith(Model& m, const std::vector<Batch>& batches, const HeadGains& gains) {
  m.setHeadGains(gains);
  return evaluateOn(m, batches, false).loss;
}
}  // namespace

class TestAnalysisLiveImportance : public QObject {
  Q_OBJECT

 private slots:
  void everyHeadOnIsTheEngineReport() {
    Trainer t(tinyInduction());
    const std::vector<Batch> batches = validationBatches(t, 2, 3);
    const LiveHeadImportance live = liveHeadImportance(t.model(), batches, true, {}, 9);
    const HeadImportanceReport report = headImportanceReport(t.model(), batches, true, 9);
    QCOMPARE(live.shown.loss, report.intact.loss);
    QCOMPARE(live.heads.size(), report.heads.size());
    for (size_t i = 0; i < live.heads.size(); ++i) {
      QCOMPARE(live.heads[i].ablation, report.heads[i].ablation);
      QVERIFY(std::abs(live.heads[i].gradient - report.heads[i].gradient) <= 1e-12);
    }
    for (size_t c = 0; c < 3; ++c) {
      QCOMPARE(live.curves[c].order, report.curves[c].order);
      QCOMPARE(live.curves[c].removed, report.curves[c].removed);
      QCOMPARE(live.curves[c].metric, report.curves[c].metric);
    }
  }

  void aHeadOffIsMeasuredAsShown() {
    Trainer t(tinyInduction());
    Model& m = t.model();
    const std::vector<Batch> batches = validationBatches(t, 2, 3);
    const HeadGains off{{1, 1}, {0, 1}};
    const LiveHeadImportance live = liveHeadImportance(m, batches, true, off, 9);

    const double shown = lossWith(m, batches, off);
    QCOMPARE(live.shown.loss, shown);
    QCOMPARE(live.heads[2].ablation, shown - lossWith(m, batches, {{1, 1}, {1, 1}}));  // layer 2, head 1: what it recovers
    QCOMPARE(live.heads[0].ablation, lossWith(m, batches, {{0, 1}, {0, 1}}) - shown);  // the others, with it off
    for (const HeadDropCurve& curve : live.curves) {
      QCOMPARE(curve.removed.size(), size_t(3));
      for (auto [l, h] : curve.removed) QVERIFY(!(l == 1 && h == 0));
      QCOMPARE(curve.loss.front(), shown);
      QCOMPARE(curve.loss.back(), lossWith(m, batches, {{0, 0}, {0, 0}}));
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, liveHeadImportance(m, batches, true, {{1, 1}}, 9));
  }
};

QTEST_APPLESS_MAIN(TestAnalysisLiveImportance)
#include "test_analysis_live_importance.moc"
