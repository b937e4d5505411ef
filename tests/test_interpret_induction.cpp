// The causal toolkit on the trained induction preset: per-head patching puts most of the effect on
// the heads the map diagnostics call previous-token or induction heads, the best retrieval head is
// an induction head, and the Im -> 0 switch (the phase of each RoPE pair's score removed) takes
// most of the induction away; the strongest K-composition into each induction head comes from the
// previous-token head, and the model reads the repeat's offset from content, not from the prefix's
// length. Prints the figures (shares, K-composition, knockouts, timings) for the record; times are
// not asserted.
#include <QtTest>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "analysis/analysis.h"
#include "analysis/map_diagnostics.h"
#include "interpret/activation_patching.h"
#include "interpret/head_composition.h"
#include "interpret/retrieval_heads.h"
#include "io/config_json.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {

template <class F>
double secondsOf(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

class TestInterpretInduction : public QObject {
  Q_OBJECT

  std::unique_ptr<Trainer> trainer_;
  std::vector<std::vector<MapDiagnostics>> maps_;
  int previousHead_ = -1, inductionHead_ = -1;  // the strongest of each kind

  // A head the maps call a previous-token (layer 0) or induction (layer 1) head.
  bool inCircuit(int layer, int head) const {
    return layer == 0 ? maps_[0][head].previous_token > 0.3 || head == previousHead_ : maps_[1][head].induction > 0.3;
  }

 private slots:
  void initTestCase() {
    ExperimentConfig c;
    QVERIFY(loadPreset("induction", c).empty());
    trainer_ = std::make_unique<Trainer>(c);
    const double seconds = secondsOf([&] {
      while (!trainer_->finished()) trainer_->trainStep();
    });
    const EvalResult eval = trainer_->evaluate();
    qInfo("trained the induction preset in %.1f s: validation accuracy %.3f", seconds, eval.accuracy);
    QVERIFY2(eval.accuracy > 0.9, "the preset did not learn induction");
    MapDiagnosticsProbe probe(trainer_->task(), trainer_->config().model.vocab, trainer_->sequenceLength(), 8, 3);
    maps_ = probe.measure(trainer_->model());
    QString scores;
    for (int h = 0; h < 4; ++h) {
      if (previousHead_ < 0 || maps_[0][h].previous_token > maps_[0][previousHead_].previous_token) previousHead_ = h;
      if (inductionHead_ < 0 || maps_[1][h].induction > maps_[1][inductionHead_].induction) inductionHead_ = h;
      scores += QString(" L0H%1 prev %2, L1H%1 induction %3;").arg(h).arg(maps_[0][h].previous_token, 0, 'f', 2).arg(maps_[1][h].induction, 0, 'f', 2);
    }
    qInfo("map diagnostics:%s", qPrintable(scores));
  }

  // Clean "r r[0..4]" predicts r[5]; the corrupted prompt changes r[5] in the first half to x.
  void headPatchingPicksTheCircuit() {
    const Model& model = trainer_->model();
    std::vector<int> half = {3, 17, 8, 25, 11, 30, 5, 21, 14, 0, 27, 9, 19, 2, 23, 12};
    PatchingRequest r;
    r.clean = half;
    r.clean.insert(r.clean.end(), half.begin(), half.begin() + 5);
    r.corrupt = r.clean;
    r.corrupt[5] = 6;  // a symbol not in the half
    r.answer = half[5];
    r.wrong = 6;
    r.site = PatchSite::head_out;
    const PatchingResult result = activationPatching(model, r);
    double total = 0, circuit = 0;
    for (const PatchEffect& e : result.rows) {
      total += std::abs(e.effect);
      if (inCircuit(e.layer, e.head)) circuit += std::abs(e.effect);
    }
    QString map;
    for (const PatchEffect& e : result.rows) map += QString(" L%1H%2 %3").arg(e.layer).arg(e.head).arg(e.effect, 0, 'f', 3);
    qInfo("per-head patching (LD clean %.2f, corrupted %.2f):%s", result.clean_diff, result.corrupt_diff, qPrintable(map));
    qInfo("share of |effect| on the previous-token and induction heads: %.3f", circuit / total);
    QVERIFY(maps_[1][inductionHead_].induction > 0.3);
    QVERIFY2(circuit / total > 0.5, qPrintable(QString::number(circuit / total)));

    r.site = PatchSite::resid;
    size_t rows = 0;
    const double seconds = secondsOf([&] { rows = activationPatching(model, r).rows.size(); });
    qInfo("residual patching sweep: %zu patches in %.3f s (loaded machine)", rows, seconds);
  }

  // The textbook circuit: the strongest K-composition into each layer-1 induction head comes from
  // the strongest previous-token head of layer 0 (the check; it needs the preset's
  // dealt_prefix, see theOffsetIsReadFromContent).
  void kCompositionIntoTheInductionHeads() {
    QVERIFY2(maps_[0][previousHead_].previous_token > 0.5, "layer 0 grew no previous-token head");
    const HeadComposition hc = headComposition(trainer_->model());
    QString report;
    int induction = 0;
    for (int to = 0; to < 4; ++to) {
      const CompositionScore* best = nullptr;
      for (const CompositionScore& s : hc.pairs) {
        QVERIFY(s.k >= 0 && s.k <= 1 && s.q >= 0 && s.q <= 1 && s.v >= 0 && s.v <= 1);
        if (s.to_head == to && (!best || s.k > best->k)) best = &s;
      }
      report += QString(" L1H%1 <- L0H%2 (%3);").arg(to).arg(best->from_head).arg(best->k, 0, 'f', 3);
      if (maps_[1][to].induction > 0.3) {
        ++induction;
        QVERIFY2(best->from_head == previousHead_, qPrintable(report));
      }
    }
    qInfo("strongest K-composition into each layer-1 head:%s strongest previous-token head L0H%d", qPrintable(report), previousHead_);
    QVERIFY(induction > 0);
  }

  // The preset deals symbols before a shorter half (task.settings.dealt_prefix): with '_' pads
  // there, their count announced the repeat's offset and a model trained on them read it instead
  // of growing a previous-token head. The trained model reads the content: with the prefix two
  // tokens shorter than the length it had in training (the repeats unchanged), it still answers.
  void theOffsetIsReadFromContent() {
    const int T = trainer_->sequenceLength();
    auto accuracy = [&](int prefixShift) {
      std::vector<Batch> batches;
      Rng rng(9);
      for (int half : {4, 8, 12, 14}) {
        Batch b{20, T, {}, {}};
        for (int row = 0; row < b.B; ++row) {
          std::vector<int> deck(32);
          std::iota(deck.begin(), deck.end(), 0);
          std::shuffle(deck.begin(), deck.end(), rng.engine());
          const int prefix = T + 1 - 2 * half + prefixShift;
          std::vector<int> s(deck.begin() + half, deck.begin() + half + prefix);  // symbols not in the half
          for (int copy = 0; copy < 2; ++copy) s.insert(s.end(), deck.begin(), deck.begin() + half);
          s.resize(T + 1, deck[half]);  // filled after the repeat, where nothing is scored
          for (int t = 0; t < T; ++t) {
            b.inputs.push_back(s[t]);
            b.targets.push_back(t >= prefix + half && t + 1 < prefix + 2 * half ? s[t + 1] : -1);  // the repeat after its first token
          }
        }
        batches.push_back(std::move(b));
      }
      return answerAccuracy(trainer_->model(), batches, nullptr);
    };
    const double asTrained = accuracy(0), twoShorter = accuracy(-2);
    qInfo("answer accuracy on [dealt prefix, r, r]: %.3f; with the prefix two tokens shorter: %.3f", asTrained, twoShorter);
    QVERIFY(asTrained > 0.9);
    QVERIFY2(twoShorter > 0.9, "the model reads the prefix's length, not the content");
  }

  void inductionHeadRetrieves() {
    const std::vector<Batch> sequences = validationBatches(*trainer_, 2, 5);
    const RetrievalStudy s = retrievalStudy(trainer_->model(), sequences, 2, 1);
    qInfo("retrieval: top heads L%dH%d, L%dH%d; accuracy %.3f, top-2 masked %.3f, random-2 masked %.3f, lowest RoPE pairs zeroed %.3f, Im -> 0 %.3f",
          s.top[0].first, s.top[0].second, s.top[1].first, s.top[1].second, s.accuracy, s.accuracy_top_masked,
          s.accuracy_random_masked, s.accuracy_rope_knockout, s.accuracy_phase_off);
    QVERIFY(inCircuit(s.top[0].first, s.top[0].second));
    QVERIFY2(s.accuracy_phase_off < 0.5 * s.accuracy, "removing the RoPE phase should remove most of the induction");
  }
};

QTEST_APPLESS_MAIN(TestInterpretInduction)
#include "test_interpret_induction.moc"
