// The tour on a real model (gpt2_induction) runs every step on an opened GPT-2-layout folder, and
// its numbers are the engine's: the probe is a random half written twice, the head table's
// induction scores are the opened model's, and each head's patch effect is what
// activationPatching computes on that probe and its corrupted twin. The folder is tiny and random
// (tests/tiny_hf_folder.h), so the tour's claims about induction heads need not hold here: this
// checks that every step runs and measures, not what a trained GPT-2 shows.
#include <QApplication>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <cmath>

#include "../tiny_hf_folder.h"
#include "attention_map_model.h"
#include "head_selection.h"
#include "interpret/activation_patching.h"
#include "io/config_json.h"
#include "main_window.h"
#include "snapshots.h"
#include "tour_numbers.h"
#include "tour_library.h"
#include "tour_panel.h"
#include "tour_runner.h"
#include "training_session.h"

using namespace attnlab;

class TourOpenedModelTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void runsEveryStepOnTheOpenedModel() {
    const std::string dir = tmp_.path().toStdString() + "/gpt2";
    QCOMPARE(QString::fromStdString(tiny_hf::writeGpt2Folder(dir, 2, 2, 16)), QString());
    ExperimentConfig config;
    QVERIFY(loadPreset("default", config).empty());
    MainWindow window(config, QStringLiteral("default"));
    window.show();
    window.openModelFolder(QString::fromStdString(dir));  // the tour finds it opening

    const Tour* tour = shippedTours().find(QStringLiteral("gpt2_induction"));
    QVERIFY(tour);
    TourRunner* runner = window.tourPanel()->runner();
    runner->setAutomatic(true);
    // As --check does: each finished step goes on to the next.
    connect(runner, &TourRunner::stepDone, runner, [runner] { QTimer::singleShot(0, runner, [runner] { runner->next(); }); });
    runner->start(*tour);
    const int last = int(tour->steps.size()) - 1;
    QTRY_VERIFY_WITH_TIMEOUT(runner->result(last).done || !runner->result(last).problem.isEmpty(), 120000);
    for (int s = 0; s <= last; ++s) QVERIFY2(runner->result(s).problem.isEmpty(), qPrintable(runner->result(s).problem));
    QVERIFY(window.session().hasOpenedModel());

    // The probe: 20 tokens, then the same 20.
    const TourNumbers& first = runner->result(0).numbers;
    QCOMPARE(first.at("probe_length"), 40.0);
    const auto trace = window.attentionMap().snapshot();
    QVERIFY(trace);
    const std::vector<int>& probe = trace->trace.tokens;
    QCOMPARE(int(probe.size()), 40);
    QVERIFY(std::equal(probe.begin(), probe.begin() + 20, probe.begin() + 20));

    // Step 2: the strongest induction head was selected.
    const TourNumbers& scores = runner->result(1).numbers;
    QVERIFY(std::isfinite(scores.at("best_induction")));
    QCOMPARE(window.selection().layer() + 1, int(scores.at("best_induction_layer")));
    QCOMPARE(window.selection().head() + 1, int(scores.at("best_induction_head")));

    // Step 4: the patch effects are activationPatching's on the probe and its corrupted twin.
    const TourNumbers& patch = runner->result(last).numbers;
    PatchingRequest request;
    request.clean = probe;
    request.corrupt = corruptedTwin(probe, tiny_hf::kVocab);
    request.site = PatchSite::head_out;
    for (int i = 0; i < 40; ++i) QCOMPARE(request.corrupt[i] != probe[i], i < 20);  // only the first half differs
    const PatchingResult engine = activationPatching(*trace->model->model, request);
    QCOMPARE(patch.at("patch_clean_diff"), engine.clean_diff);
    QCOMPARE(patch.at("patch_corrupt_diff"), engine.corrupt_diff);
    QCOMPARE(int(engine.rows.size()), 4);
    double best = -1e30;
    for (const PatchEffect& row : engine.rows) {
      const std::string key = "patch_effect(" + std::to_string(row.layer + 1) + "," + std::to_string(row.head + 1) + ")";
      QCOMPARE(patch.at(key), row.effect);
      best = std::max(best, row.effect);
    }
    QCOMPARE(patch.at("best_patch_effect"), best);
    const int layer = window.selection().layer(), head = window.selection().head();
    QCOMPARE(patch.at("patch_effect(L,H)"), patch.at("patch_effect(" + std::to_string(layer + 1) + "," + std::to_string(head + 1) + ")"));
  }
};

QTEST_MAIN(TourOpenedModelTest)
#include "test_tour_opened_model.moc"
