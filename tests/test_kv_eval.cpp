// Perplexity with eviction: without eviction the teacher-forced decode gives the full forward's
// loss; the matched protocol hands a post-hoc policy exactly the gated run's live counts.
#include <QtTest>

#include "core/random.h"
#include "kv/live_cache_eval.h"
#include "model/workspace.h"

using namespace attnlab;

namespace {

std::unique_ptr<Task> toyLanguage() {
  TaskConfig t;
  std::string error;
  auto task = makeTask(t, error);
  if (!task) qFatal("%s", error.c_str());
  return task;
}

std::unique_ptr<Model> gatedModel(const Task& task, const std::string& attention) {
  ModelConfig c;
  c.vocab = task.vocabulary().size();
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 32;
  c.context = 24;
  c.positional = "alibi";
  c.attention = {attention};
  c.retention_gate = true;
  auto model = std::make_unique<Model>(c, 5);
  Rng rng(9);
  for (auto& p : model->params().all())
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] += rng.normal(0.f, 0.3f);
  return model;
}

}  // namespace

class TestKvEval : public QObject {
  Q_OBJECT

 private slots:
  void fullCacheGivesTheForwardLoss() {
    const auto task = toyLanguage();
    const auto model = gatedModel(*task, "softmax");
    const Batch seqs = heldOutSequences(*task, 3, 24, 1);
    const LiveCacheResult r = evaluateLiveCache(*model, seqs, {});
    auto ws = makeWorkspace();
    const double forwardLoss = model->forward(*ws, seqs.inputs.data(), seqs.targets.data(), seqs.B, seqs.T);  // lambda 0: no extra term
    QVERIFY2(std::abs(r.loss - forwardLoss) < 1e-4, qPrintable(QString("%1 vs %2").arg(r.loss).arg(forwardLoss)));
    QCOMPARE(r.liveShare, 1.0);
    QCOMPARE(r.tokens, 3L * 24);
    // and a ratio budget of 100% is the same as keeping everything
    LiveCacheSetup all;
    all.policy = "h2o";
    parseBudget("100%", "head", all.budget);
    QCOMPARE(evaluateLiveCache(*model, seqs, all).loss, r.loss);
  }

  void matchedProtocolReplaysTheGatedCounts() {
    const auto task = toyLanguage();
    for (const char* attention : {"softmax", "sigmoid"}) {
      const auto model = gatedModel(*task, attention);
      const Batch seqs = heldOutSequences(*task, 2, 24, 1);
      LiveCacheSetup gate;
      gate.policy = "learned_gate";
      gate.settings["threshold"] = 0.9;  // the gates start near sigmoid(2) = 0.88
      const LiveCacheResult gated = evaluateLiveCache(*model, seqs, gate);
      QVERIFY2(gated.liveShare < 0.95 && gated.liveShare > 0.05, qPrintable(QString::number(gated.liveShare)));
      for (const char* policy : {"h2o", "keydiff", "window", "tova", "snapkv", "random", "k_norm", "streaming_llm"}) {
        LiveCacheSetup post;
        post.policy = policy;
        const LiveCacheResult matched = evaluateLiveCache(*model, seqs, post, &gated.liveCounts);
        QCOMPARE(matched.liveCounts, gated.liveCounts);
        QCOMPARE(matched.liveShare, gated.liveShare);
      }
      // the gate's own choice replayed through the protocol is the gated run
      const LiveCacheResult replay = evaluateLiveCache(*model, seqs, gate, &gated.liveCounts);
      QCOMPARE(replay.loss, gated.loss);
    }
  }

  void mismatchedCountsAreRefused() {
    const auto task = toyLanguage();
    const auto model = gatedModel(*task, "softmax");
    const Batch seqs = heldOutSequences(*task, 2, 24, 1);
    const std::vector<int> wrong(7, 1);
    LiveCacheSetup post;
    post.policy = "h2o";
    try {
      evaluateLiveCache(*model, seqs, post, &wrong);
      QFAIL("expected an error");
    } catch (const std::invalid_argument& e) {
      QVERIFY(QString(e.what()).contains("matched live counts"));
    }
  }
};

QTEST_APPLESS_MAIN(TestKvEval)
#include "test_kv_eval.moc"
