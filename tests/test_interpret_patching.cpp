// Activation patching's exact contracts: patching from a run identical to the corrupted one gives
// exactly 0 at every site; restoring the whole final residual (or the last position's, which is
// all the last logits read) gives exactly 1; and bad requests fail with a reason.
#include <QtTest>

#include "interpret/activation_hooks.h"
#include "interpret/activation_patching.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::vector<int> kClean = {1, 4, 2, 7, 3, 1, 4, 5};
const std::vector<int> kCorrupt = {1, 4, 2, 6, 3, 8, 4, 5};

PatchingRequest request(PatchSite site, bool perPosition = false) {
  PatchingRequest r;
  r.clean = kClean;
  r.corrupt = kCorrupt;
  r.site = site;
  r.perPosition = perPosition;
  return r;
}

std::unique_ptr<Model> gqaModel(bool attentionOnly = false) {
  ModelConfig c = smallConfig("softmax", "rope");
  c.n_kv_heads = 2;
  c.attention_only = attentionOnly;
  return randomisedModel(c);
}

// Answer and wrong tokens with distinct clean and corrupted logit differences.
PatchingRequest withTokens(const Model& model, PatchingRequest r) {
  const Mat clean = runWithHooks(model, r.clean, nullptr), corrupt = runWithHooks(model, r.corrupt, nullptr);
  for (r.answer = 0; r.answer < model.config().vocab; ++r.answer)
    for (r.wrong = 0; r.wrong < model.config().vocab; ++r.wrong)
      if (r.answer != r.wrong && std::abs(logitDifference(clean, r.answer, r.wrong) - logitDifference(corrupt, r.answer, r.wrong)) > 0.1)
        return r;
  return r;
}

}  // namespace

class TestInterpretPatching : public QObject {
  Q_OBJECT

 private slots:
  void identicalSourceGivesExactlyZero() {
    auto model = gqaModel();
    for (PatchSite site : {PatchSite::resid, PatchSite::attn_out, PatchSite::mlp_out, PatchSite::head_out, PatchSite::pattern, PatchSite::values})
      for (bool perPosition : {false, true}) {
        PatchingRequest r = withTokens(*model, request(site, perPosition));
        r.source = kCorrupt;
        const PatchingResult result = activationPatching(*model, r);
        QVERIFY(!result.rows.empty());
        for (const PatchEffect& e : result.rows)
          QVERIFY2(e.effect == 0.0, qPrintable(QString("site %1 layer %2 head %3 position %4: %5")
                                                   .arg(int(site)).arg(e.layer).arg(e.head).arg(e.position).arg(e.effect)));
      }
  }

  void finalResidualGivesExactlyOne() {
    auto model = gqaModel();
    const PatchingRequest r = withTokens(*model, request(PatchSite::resid));
    const PatchingResult result = activationPatching(*model, r);
    const int L = model->config().n_layers, T = static_cast<int>(kClean.size());
    QCOMPARE(result.rows.size(), size_t((L + 1) * T));
    for (const PatchEffect& e : result.rows)
      if (e.layer == L && e.position == T - 1) QCOMPARE(e.effect, 1.0);
    // The whole final residual, and the whole stream entering block 0, restore the clean logits.
    ActivationRecorder clean;
    runWithHooks(*model, kClean, &clean);
    for (Patch p : {Patch{HookSite::resid_post, L - 1, -1, {}}, Patch{HookSite::resid_pre, 0, -1, {}}}) {
      ActivationPatcher patcher(clean, {p});
      const double ld = lastLogitDifference(*model, kCorrupt, &patcher, result.answer, result.wrong);
      QCOMPARE((ld - result.corrupt_diff) / (result.clean_diff - result.corrupt_diff), 1.0);
    }
    // Positions the clean and corrupted prompts share carry nothing at block 0.
    for (const PatchEffect& e : result.rows)
      if (e.layer == 0 && kClean[e.position] == kCorrupt[e.position]) QCOMPARE(e.effect, 0.0);
  }

  void headSitesHaveOneRowPerHead() {
    auto model = gqaModel();
    const ModelConfig& c = model->config();
    QCOMPARE(activationPatching(*model, withTokens(*model, request(PatchSite::head_out))).rows.size(), size_t(c.n_layers * c.n_heads));
    QCOMPARE(activationPatching(*model, withTokens(*model, request(PatchSite::values))).rows.size(), size_t(c.n_layers * 2));
    QCOMPARE(activationPatching(*model, withTokens(*model, request(PatchSite::pattern, true))).rows.size(),
             size_t(c.n_layers * c.n_heads * kClean.size()));
  }

  void progressCanStop() {
    auto model = gqaModel();
    int calls = 0;
    const PatchingResult r = activationPatching(*model, withTokens(*model, request(PatchSite::resid)), [&](int done, int total) {
      ++calls;
      return done < total / 2;
    });
    QCOMPARE(r.rows.size(), size_t(12));  // 3 x 8 patches, stopped half way
    QCOMPARE(calls, 13);
  }

  void badRequestsFailWithAReason() {
    auto model = gqaModel(true);
    PatchingRequest r = request(PatchSite::resid);
    r.corrupt.pop_back();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationPatching(*model, r));
    r = request(PatchSite::resid);
    r.corrupt = r.clean;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationPatching(*model, r));  // nothing to restore
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationPatching(*model, withTokens(*model, request(PatchSite::mlp_out))));
    r = request(PatchSite::resid);
    r.clean[0] = 99;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationPatching(*model, r));
    PatchSite site;
    QVERIFY(!parsePatchSite("residual", site));
    QVERIFY(parsePatchSite("values", site) && site == PatchSite::values);
  }
};

QTEST_APPLESS_MAIN(TestInterpretPatching)
#include "test_interpret_patching.moc"
