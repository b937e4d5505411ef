// Named hook points (model/hooks.h): the names, what each site hands over, that reading changes
// nothing, and that what a hook writes is what the rest of the pass computes from.
#include <QtTest>

#include "interpret/activation_hooks.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 7, 3, 1, 4, 5};

bool same(const Mat& a, const Mat& b) { return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all(); }

}  // namespace

class TestInterpretHooks : public QObject {
  Q_OBJECT

 private slots:
  void namesRoundTrip() {
    ModelConfig c = smallConfig("softmax", "rope");
    const auto names = hookNames(c);
    QCOMPARE(names.size(), size_t(2 * 11 + 1));
    QCOMPARE(names.front(), std::string("blocks.0.resid_pre"));
    QCOMPARE(names.back(), std::string("ln_f.out"));
    for (const auto& name : names) {
      HookSite site;
      int layer;
      QVERIFY2(parseHookName(name, c, site, layer), name.c_str());
      QCOMPARE(hookName(site, layer), name);
    }
    HookSite site;
    int layer;
    QVERIFY(!parseHookName("blocks.2.resid_pre", c, site, layer));  // only 2 layers
    QVERIFY(!parseHookName("blocks.x.resid_pre", c, site, layer));
    QVERIFY(!parseHookName("blocks.0.attn.nothing", c, site, layer));
    c.attention_only = true;
    QCOMPARE(hookNames(c).size(), size_t(2 * 8 + 1));
    QVERIFY(!parseHookName("blocks.0.mlp.out", c, site, layer));
  }

  // Each site hands over the tensor the workspace keeps, with the shape its name promises.
  void sitesHandOverTheirTensors() {
    ModelConfig c = smallConfig("softmax", "rope");
    c.n_kv_heads = 2;
    auto model = randomisedModel(c);
    ActivationRecorder rec;
    auto ws = makeWorkspace();
    ws->hooks = &rec;
    const std::vector<int> none(kTokens.size(), -1);
    Trace trace;
    model->forward(*ws, kTokens.data(), none.data(), 1, static_cast<int>(kTokens.size()), &trace);
    const int T = static_cast<int>(kTokens.size());
    for (int l = 0; l < c.n_layers; ++l) {
      QVERIFY(same(rec.get(HookSite::resid_pre, l).headRows(0), ws->blocks[l].x));
      QVERIFY(same(rec.get(HookSite::attn_out, l).headRows(0), ws->blocks[l].attn_out));
      QVERIFY(same(rec.get(HookSite::resid_mid, l).headRows(0), ws->blocks[l].x_mid));
      QVERIFY(same(rec.get(HookSite::mlp_out, l).headRows(0), ws->blocks[l].mlp_out));
      QCOMPARE(rec.get(HookSite::mlp_hidden, l).width, c.d_ff);
      const RecordedActivation& pattern = rec.get(HookSite::attn_pattern, l);
      QCOMPARE(pattern.heads, c.n_heads);
      QCOMPARE(pattern.width, T);
      for (int h = 0; h < c.n_heads; ++h) QVERIFY(same(pattern.headRows(h), trace.layers[l].heads[h].weights));
      const RecordedActivation& v = rec.get(HookSite::attn_v, l);
      QCOMPARE(v.heads, 2);
      QCOMPARE(v.width, c.headDim());
      QVERIFY(same(v.headRows(1), trace.layers[l].heads[2].v));  // query head 2 reads KV head 1
      QCOMPARE(rec.get(HookSite::attn_head_out, l).heads, c.n_heads);
    }
    QVERIFY(same(rec.get(HookSite::resid_post, c.n_layers - 1).headRows(0), ws->x_final));
    QVERIFY(same(rec.get(HookSite::ln_f_out, -1).headRows(0), ws->ln_f));
  }

  // Hooks that only read leave the pass bit for bit as it is without them.
  void readingChangesNothing() {
    auto model = randomisedModel(smallConfig("softmax", "alibi"));
    ActivationRecorder rec;
    QVERIFY(same(runWithHooks(*model, kTokens, &rec), runWithHooks(*model, kTokens, nullptr)));
  }

  // What a hook writes is what the rest of the pass reads: a zero final residual leaves only the
  // final norm's bias, and a pattern replaced by "look at position 0" makes the head output v_0.
  void writesFlowOn() {
    ModelConfig c = smallConfig("softmax", "rope");
    auto model = randomisedModel(c);
    EditHook zero([&](HookSite s, int l) { return s == HookSite::resid_post && l == c.n_layers - 1; },
                  [](const Activation& a) { std::fill_n(a.data, a.size(), 0.0f); });
    Mat want;
    model->unembed(Mat::Zero(static_cast<Eigen::Index>(kTokens.size()), c.d_model), want);
    QVERIFY(same(runWithHooks(*model, kTokens, &zero), want));

    EditHook firstKey([](HookSite s, int l) { return s == HookSite::attn_pattern && l == 1; },
                      [](const Activation& a) {
                        for (int t = 0; t < a.T; ++t) {
                          std::fill_n(a.row(0, 2, t), a.width, 0.0f);
                          a.row(0, 2, t)[0] = 1.0f;
                        }
                      });
    ActivationRecorder rec;
    HookChain both({&firstKey, &rec});
    runWithHooks(*model, kTokens, &both);
    const Mat v0 = rec.get(HookSite::attn_v, 1).headRows(2).row(0);  // no GQA: KV head 2 serves head 2
    const Mat out = rec.get(HookSite::attn_head_out, 1).headRows(2);
    for (int t = 0; t < out.rows(); ++t) QVERIFY2((out.row(t) - v0).cwiseAbs().maxCoeff() < 1e-6f, qPrintable(QString::number(t)));
    // The other heads keep the variant's own output, bit for bit.
    ActivationRecorder plain;
    runWithHooks(*model, kTokens, &plain);
    QVERIFY(same(rec.get(HookSite::attn_head_out, 1).headRows(1), plain.get(HookSite::attn_head_out, 1).headRows(1)));
  }
};

QTEST_APPLESS_MAIN(TestInterpretHooks)
#include "test_interpret_hooks.moc"
