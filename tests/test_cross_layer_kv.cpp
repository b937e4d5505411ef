// Cross-layer KV sharing (cross-layer attention, Brandon et al. 2024): with model.kv_share_group = G,
// the first layer of each group of G computes K/V and the others read them. Readers have no
// W_k/W_v; gradients match finite differences, the source's W_k/W_v receive every reader's share;
// decoding holds one K/V per group (bytes exactly live entries x row size, once per group) and
// equals the full forward; eviction runs on the source's cache; the interpretation shortcuts that
// start a pass at a later block stay exact; the refused combinations say why in one line.
#include <QTemporaryDir>
#include <QtTest>

#include <stdexcept>

#include "analysis/head_importance.h"
#include "grad_check.h"
#include "interpret/activation_hooks.h"
#include "interpret/activation_patching.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "kv/decoder.h"
#include "kv/kv_bytes.h"

using namespace attnlab;
using testing::randomisedModel;
using testing::smallConfig;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1, 4, 4};

ModelConfig sharedConfig(const std::string& attention, const std::string& positional, int layers, int group) {
  ModelConfig c = smallConfig(attention, positional, 9, 16);
  c.n_layers = layers;
  c.kv_share_group = group;
  return c;
}

Mat fullLogits(const Model& model) {
  auto ws = makeWorkspace();
  const std::vector<int> targets(kTokens.size(), -1);
  model.forward(*ws, kTokens.data(), targets.data(), 1, static_cast<int>(kTokens.size()));
  return workspaceLogits(*ws);
}

// Decodes kTokens through the dense cache; returns the largest |decoded - full| logit relative to
// the logits' scale, or -1 when after some step the bytes held are not exactly (tokens so far) x
// (the bytes of one entry) x KV heads, counted once per group and held by the group's first layer.
double decodeErrorCheckingBytes(const Model& model) {
  Decoder decoder(model, makeEvictionPolicy("full", {}, model.config()), "full", Budget{});
  const Mat full = fullLogits(model);
  const ModelConfig& c = model.config();
  double worst = 0;
  for (size_t t = 0; t < kTokens.size(); ++t) {
    const Mat& logits = decoder.step(kTokens[t]);
    worst = std::max(worst, static_cast<double>((logits - full.row(static_cast<Eigen::Index>(t))).cwiseAbs().maxCoeff()));
    size_t expected = 0;
    for (int l = 0; l < c.n_layers; ++l)
      for (int h = 0; h < c.kvHeads(); ++h) {
        const size_t held = decoder.cache().bytes(l, h);
        const size_t owed = c.kvSourceOf(l) == l ? (t + 1) * decoder.cache().bytesPerEntry(l) : 0;
        if (held != owed) return -1;
        expected += owed;
      }
    if (decoder.record().bytes != expected || expected != (t + 1) * kvCacheBytesPerToken(c)) return -1;
  }
  return worst / std::max(1.0f, full.cwiseAbs().maxCoeff());
}

bool hasParam(const Model& model, const std::string& name) { return model.params().find(name) != nullptr; }

}  // namespace

class TestCrossLayerKv : public QObject {
  Q_OBJECT

 private slots:
  void readersHaveNoKeyOrValueProjection() {
    ModelConfig c = sharedConfig("softmax", "rope", 5, 2);
    c.qkv_bias = true;
    const Model model(c, 1);
    for (int l = 0; l < 5; ++l) {
      const std::string pre = "blocks." + std::to_string(l) + ".attn.";
      const bool source = l % 2 == 0;  // groups {0,1}, {2,3}, {4}
      QCOMPARE(c.kvSourceOf(l), l - l % 2);
      for (const char* own : {"wk.weight", "wv.weight", "wk.bias", "wv.bias"}) QCOMPARE(hasParam(model, pre + own), source);
      QVERIFY(hasParam(model, pre + "wq.weight") && hasParam(model, pre + "wq.bias") && hasParam(model, pre + "wo.weight"));
    }
    c.projection_sharing = "q_k=v";
    const Model kv(c, 1);
    QVERIFY(hasParam(kv, "blocks.0.attn.wkv.weight") && !hasParam(kv, "blocks.1.attn.wkv.weight"));
  }

  // A reader attends over exactly its source's keys and values, with its own queries.
  void readersScoreTheirQueriesAgainstTheSourceKeys() {
    const auto model = randomisedModel(sharedConfig("softmax", "rope", 3, 3));
    auto ws = makeWorkspace();
    const std::vector<int> targets(kTokens.size(), -1);
    Trace trace;
    model->forward(*ws, kTokens.data(), targets.data(), 1, static_cast<int>(kTokens.size()), &trace);
    for (int l = 1; l < 3; ++l)
      for (int h = 0; h < 4; ++h) {
        QCOMPARE(trace.layers[l].heads[h].k, trace.layers[0].heads[h].k);
        QCOMPARE(trace.layers[l].heads[h].v, trace.layers[0].heads[h].v);
        QVERIFY(trace.layers[l].heads[h].q != trace.layers[0].heads[h].q);
      }
  }

  void gradientsMatchFiniteDifferences_data() {
    QTest::addColumn<QString>("attention");
    QTest::addColumn<QString>("option");
    QTest::newRow("softmax/rope") << "softmax" << "rope";
    QTest::newRow("softmax/mqa,bias,value_gate") << "softmax" << "mqa,bias,value_gate";
    QTest::newRow("softmax/q_k=v,rope") << "softmax" << "q_k=v,rope";
    QTest::newRow("sigmoid/alibi") << "sigmoid" << "alibi";
    QTest::newRow("qk_norm/rope,output_gate") << "qk_norm" << "rope,output_gate";
    QTest::newRow("softmax/rotate_values") << "softmax" << "rotate_values";
  }
  void gradientsMatchFiniteDifferences() {
    QFETCH(QString, attention);
    QFETCH(QString, option);
    const std::string positional = option.contains("rope") ? "rope" : option.contains("alibi") ? "alibi"
                                   : option.contains("rotate_values") ? "accumulated_rotation" : "learned";
    ModelConfig c = testing::gradCheckConfig(attention.toStdString(), positional);
    c.kv_share_group = 2;
    if (option.contains("rotate_values")) c.positional_settings = {{"omega_mode", 1}, {"rotate_values", 1}};
    if (option.contains("mqa")) c.n_kv_heads = 1;
    if (option.contains("bias")) c.qkv_bias = true;
    if (option.contains("value_gate")) c.value_gate = true;
    if (option.contains("q_k=v")) c.projection_sharing = "q_k=v";
    if (option.contains("output_gate")) c.output_gate = "headwise";
    Model model(c, 2);
    testing::randomiseParams(model, 9, 0.3f);
    QVERIFY(!hasParam(model, "blocks.1.attn.wk.weight"));
    // a key bias shifts all of a query's scores alike, which softmax ignores
    const auto invariant = [&](const std::string& name) { return attention == "softmax" && name.size() > 7 && name.ends_with("wk.bias"); };
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 4), "shared " + attention.toStdString() + " " + option.toStdString(), 1e-2,
                            40, {}, invariant);
  }

  // With the source layer's own heads switched off, its W_k and W_v reach the loss only through
  // the reader: their gradients are then the reader's alone, and still match finite differences.
  void sourceWeightsLearnFromTheReader() {
    ModelConfig c = testing::gradCheckConfig("softmax", "rope");
    c.kv_share_group = 2;
    Model model(c, 2);
    testing::randomiseParams(model, 9, 0.3f);
    model.setHeadGains({{0.0f, 0.0f}, {1.0f, 1.0f}});
    const auto unread = [](const std::string& name) { return name == "blocks.0.attn.wq.weight" || name == "blocks.0.attn.wo.weight"; };
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 4), "reader only", 1e-2, 40, unread);
    QVERIFY(model.params().find("blocks.0.attn.wk.weight")->grad.cwiseAbs().maxCoeff() > 1e-4f);
  }

  void decodeEqualsForward_data() {
    QTest::addColumn<QString>("attention");
    QTest::addColumn<QString>("option");
    for (const auto& entry : AttentionRegistry::instance().entries()) QTest::newRow(entry.name.c_str()) << QString::fromStdString(entry.name) << "";
    for (const char* opt : {"gqa", "mqa", "value_gate", "q_k=v", "q_k=v,alibi", "output_gate", "bias", "group3", "int8"})
      QTest::newRow(qPrintable(QString("softmax+") + opt)) << "softmax" << opt;
  }
  void decodeEqualsForward() {
    QFETCH(QString, attention);
    QFETCH(QString, option);
    ModelConfig c = sharedConfig(attention.toStdString(), option.contains("alibi") ? "alibi" : "rope", 5,
                                 option.contains("group3") ? 3 : 2);
    c.attention_settings["window"] = 5;
    if (option.contains("gqa")) c.n_kv_heads = 2;
    if (option.contains("mqa")) c.n_kv_heads = 1;
    if (option.contains("value_gate")) c.value_gate = true;
    if (option.contains("q_k=v")) c.projection_sharing = "q_k=v";
    if (option.contains("output_gate")) c.output_gate = "elementwise";
    if (option.contains("bias")) c.qkv_bias = true;
    ExperimentConfig e;
    e.model = c;
    if (const std::string why = validate(e); why.find("cross-layer KV") != std::string::npos)
      QSKIP(why.c_str());  // refused for sharing, with its reason (refusalsAreOneLine checks the list)
    const auto model = randomisedModel(c);
    try {
      const double error = decodeErrorCheckingBytes(*model);
      QVERIFY2(error >= 0, "the cache holds other bytes than one K/V per group");
      QVERIFY2(error < 2e-5, qPrintable(QString("relative error %1").arg(error)));
    } catch (const std::invalid_argument& ex) {
      // only a variant that filters its keys (momentum), or one that decodes from no cache at all
      // with or without sharing (multi_token), refuses
      const std::string why = ex.what();
      QVERIFY2(why.find("filters its keys") != std::string::npos || why.find("cannot decode from a KV cache") != std::string::npos,
               why.c_str());
    }
  }

  void bytesPerTokenCountEachGroupOnce() {
    ModelConfig c = sharedConfig("softmax", "rope", 4, 1);
    const size_t perLayer = 2 * 4 * RowStore::rowBytes(KvQuant::fp32, c.headDim());
    QCOMPARE(kvCacheBytesPerToken(c), 4 * perLayer);
    c.kv_share_group = 2;
    QCOMPARE(kvCacheBytesPerToken(c), 2 * perLayer);
    c.kv_share_group = 3;  // groups {0,1,2} and {3}
    QCOMPARE(kvCacheBytesPerToken(c), 2 * perLayer);
    c.kv_share_group = 4;
    QCOMPARE(kvCacheBytesPerToken(c, KvQuant::int8), 2 * 4 * RowStore::rowBytes(KvQuant::int8, c.headDim()));
  }

  // Eviction acts on the one shared cache, scored by the source layer's attention: readers hold
  // and report nothing, and each source head keeps its budget at every step.
  void evictionTrimsTheSharedCache() {
    const auto model = randomisedModel(sharedConfig("softmax", "rope", 4, 2));
    for (const char* policy : {"window", "h2o"}) {
      Budget budget;
      QCOMPARE(QString::fromStdString(parseBudget("4", "head", budget)), QString());
      Decoder decoder(*model, makeEvictionPolicy(policy, {}, model->config()), policy, budget);
      for (size_t t = 0; t < kTokens.size(); ++t) {
        const Mat& logits = decoder.step(kTokens[t]);
        QVERIFY(logits.allFinite());
        QCOMPARE(decoder.record().heads.size(), size_t(2 * 4));  // layers 0 and 2, four KV heads each
        for (const HeadOccupancy& h : decoder.record().heads) {
          QVERIFY(h.layer % 2 == 0);
          QCOMPARE(h.live.size(), std::min(t + 1, size_t(4)));
        }
        for (int h = 0; h < 4; ++h) QCOMPARE(decoder.cache().head(1, h).size(), 0);
      }
    }
  }

  // Head importance and activation patching start a pass at a later block from the stream of an
  // earlier pass; a block reading its group's K/V needs the group's first block to run too.
  void headImportanceShortcutStaysExact() {
    const ModelConfig c = sharedConfig("softmax", "rope", 3, 2);
    const auto model = randomisedModel(c);
    std::vector<Batch> batches(1, Batch{2, 8, {}, {}});
    for (int i = 0; i < 16; ++i) {
      batches[0].inputs.push_back(kTokens[i % kTokens.size()]);
      batches[0].targets.push_back(kTokens[(i + 3) % kTokens.size()]);
    }
    model->setHeadGains({});
    const BlockInputs inputs = blockInputs(*model, batches);
    for (int l = 0; l < c.n_layers; ++l) {
      std::vector<std::vector<float>> gains(c.n_layers, std::vector<float>(c.n_heads, 1.0f));
      gains[l][2] = 0;
      model->setHeadGains(gains);
      const double full = evaluateOn(*model, batches, false).loss;
      QVERIFY2(lossFrom(*model, batches, l, inputs) == full, qPrintable(QString("layer %1").arg(l)));
    }
    // a pass told to start at a reader is refused, not silently wrong
    auto ws = makeWorkspace();
    ws->first_layer = 1;
    ws->start_stream = inputs[0][1];
    try {
      model->forward(*ws, batches[0].inputs.data(), batches[0].targets.data(), 2, 8);
      QFAIL("a pass started at a reader of shared K/V");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("must start at block 0") != std::string::npos, e.what());
    }
  }

  void activationPatchingStaysExact() {
    const auto model = randomisedModel(sharedConfig("softmax", "rope", 3, 3));
    PatchingRequest r;
    r.clean = {1, 4, 2, 7, 3, 1, 4, 5};
    r.corrupt = {1, 4, 2, 6, 3, 8, 4, 5};
    ActivationRecorder clean;
    runWithHooks(*model, r.clean, &clean);
    for (PatchSite site : {PatchSite::resid, PatchSite::head_out, PatchSite::values}) {
      r.site = site;
      r.perPosition = site == PatchSite::resid;
      const PatchingResult result = activationPatching(*model, r);
      QVERIFY(!result.rows.empty());
      for (const PatchEffect& e : result.rows) {
        if (e.layer >= model->config().n_layers) continue;  // the final residual: no block after it
        const HookSite hook = site == PatchSite::resid ? HookSite::resid_pre : site == PatchSite::head_out ? HookSite::attn_head_out : HookSite::attn_v;
        ActivationPatcher patcher(clean, {Patch{hook, e.layer, e.head, e.position >= 0 ? std::vector<int>{e.position} : std::vector<int>{}}});
        const double ld = lastLogitDifference(*model, r.corrupt, &patcher, result.answer, result.wrong);  // from block 0
        const double effect = (ld - result.corrupt_diff) / (result.clean_diff - result.corrupt_diff);
        QVERIFY2(effect == e.effect, qPrintable(QString("site %1 layer %2 head %3 position %4: sweep %5, full pass %6")
                                                    .arg(int(site)).arg(e.layer).arg(e.head).arg(e.position).arg(e.effect).arg(effect)));
      }
    }
  }

  void checkpointKeepsTheGroups() {
    ExperimentConfig e;
    for (const char* set : {"task.name=copy", "model.d_model=16", "model.n_layers=3", "model.n_heads=2", "model.d_ff=24",
                            "model.context=16", "model.positional=rope", "model.kv_share_group=2", "train.batch=2",
                            "train.steps=3", "train.threads=1"})
      QCOMPARE(QString::fromStdString(applyOverride(e, set)), QString());
    ExperimentConfig back;
    QCOMPARE(QString::fromStdString(configFromJson(configToJson(e), back)), QString());
    QCOMPARE(back.model.kv_share_group, 2);
    Trainer trainer(e);
    trainer.trainStep();
    QTemporaryDir dir;
    QCOMPARE(QString::fromStdString(saveCheckpoint(dir.path().toStdString() + "/run", trainer)), QString());
    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(dir.path().toStdString() + "/run", loaded)), QString());
    QCOMPARE(loaded.config.model.kv_share_group, 2);
    QVERIFY(!loaded.trainer->model().params().find("blocks.1.attn.wk.weight"));
    for (const auto& p : trainer.model().params().all())
      QCOMPARE(loaded.trainer->model().params().find(p->name)->value, p->value);
  }

  void refusalsAreOneLine_data() {
    QTest::addColumn<QString>("set");
    QTest::addColumn<QString>("expected");
    QTest::newRow("negative group") << "model.kv_share_group=-1" << "[0, n_layers]";
    QTest::newRow("group > layers") << "model.kv_share_group=5" << "[0, n_layers]";
    QTest::newRow("latent") << "model.projection_sharing=latent" << "latent KV";
    QTest::newRow("queries are keys") << "model.projection_sharing=q=k_v" << "no key projection";
    QTest::newRow("mixed group") << "model.attention=softmax,sigmoid,softmax,softmax" << "differ in attention variant";
    QTest::newRow("linear") << "model.attention=linear" << "per-layer state";
    QTest::newRow("deltanet") << "model.attention=deltanet" << "per-layer state";
    QTest::newRow("oattention") << "model.attention=oattention" << "presence";
    QTest::newRow("retention gate") << "model.retention_gate=true" << "retention gate";
    QTest::newRow("learned rotation") << "model.positional=accumulated_rotation" << "learned per layer";
  }
  void refusalsAreOneLine() {
    QFETCH(QString, set);
    QFETCH(QString, expected);
    ExperimentConfig e;
    for (const char* base : {"model.n_layers=4", "model.kv_share_group=2", "model.positional=alibi"})
      QCOMPARE(QString::fromStdString(applyOverride(e, base)), QString());
    QCOMPARE(QString::fromStdString(validate(e)), QString());
    QCOMPARE(QString::fromStdString(applyOverride(e, set.toStdString())), QString());
    const std::string why = validate(e);
    QVERIFY2(why.find(expected.toStdString()) != std::string::npos, why.c_str());
    QVERIFY(why.find('\n') == std::string::npos);
    e.model.vocab = 9;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Model(e.model, 1));
  }
};

QTEST_APPLESS_MAIN(TestCrossLayerKv)
#include "test_cross_layer_kv.moc"
