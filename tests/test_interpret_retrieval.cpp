// Retrieval knockouts and the RoPE switches: k = 0 changes nothing bit for bit, the phase switch
// with the phase kept recomputes the model's own maps, dropping every rotary pair leaves content-
// free (uniform) maps, and a knocked-out head outputs zero.
#include <QtTest>

#include "interpret/retrieval_heads.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 7, 3, 1, 4, 5};

bool same(const Mat& a, const Mat& b) { return (a.array() == b.array()).all(); }

}  // namespace

class TestInterpretRetrieval : public QObject {
  Q_OBJECT

 private slots:
  void zeroKnockoutsChangeNothing() {
    auto model = randomisedModel(smallConfig("softmax", "rope"));
    const Mat plain = runWithHooks(*model, kTokens, nullptr);
    EditHook none = headKnockout({});
    EditHook noPairs = ropePairKnockout(*model, {{0, 1}, {1, 2}}, 0);
    QVERIFY(same(runWithHooks(*model, kTokens, &none), plain));
    QVERIFY(same(runWithHooks(*model, kTokens, &noPairs), plain));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ropePairKnockout(*model, {{0, 0}}, 5));  // d_head 4: 2 pairs
  }

  void phaseSwitchKeepingThePhaseIsTheModel() {
    ModelConfig c = smallConfig("softmax", "rope");
    c.d_model = 32;  // d_head 8: 4 rotary pairs
    c.n_kv_heads = 2;
    auto model = randomisedModel(c, 0.5f);
    const Mat plain = runWithHooks(*model, kTokens, nullptr);
    RopePhaseSwitch keep(*model, true), drop(*model, false);
    QVERIFY((runWithHooks(*model, kTokens, &keep) - plain).cwiseAbs().maxCoeff() < 1e-4f);
    QVERIFY((runWithHooks(*model, kTokens, &drop) - plain).cwiseAbs().maxCoeff() > 1e-3f);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, RopePhaseSwitch(*randomisedModel(smallConfig("softmax", "alibi"))));
  }

  // With every pair of q and k zeroed the scores are 0: each query spreads evenly over its keys.
  void allPairsZeroedGivesUniformMaps() {
    auto model = randomisedModel(smallConfig("softmax", "rope"));
    const int pairs = model->attentionLayer(0).positional().rotaryPairs();
    HeadList all;
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 4; ++h) all.push_back({l, h});
    EditHook knockout = ropePairKnockout(*model, all, pairs);
    ActivationRecorder rec;
    HookChain both({&knockout, &rec});
    runWithHooks(*model, kTokens, &both);
    const Mat map = rec.get(HookSite::attn_pattern, 1).headRows(3);
    for (int i = 0; i < map.rows(); ++i)
      for (int j = 0; j <= i; ++j) QVERIFY(std::abs(map(i, j) - 1.0f / (i + 1)) < 1e-6f);

    EditHook off = headKnockout({{1, 2}});
    ActivationRecorder rec2;
    HookChain both2({&off, &rec2});
    runWithHooks(*model, kTokens, &both2);
    QVERIFY(rec2.get(HookSite::attn_head_out, 1).headRows(2).isZero(0));
    QVERIFY(!rec2.get(HookSite::attn_head_out, 1).headRows(1).isZero(0));
  }
};

QTEST_APPLESS_MAIN(TestInterpretRetrieval)
#include "test_interpret_retrieval.moc"
