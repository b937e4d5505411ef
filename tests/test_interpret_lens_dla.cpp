// Logit lens and direct logit attribution against their contracts: the lens at the last layer is
// the model's logits bit for bit; the attribution's terms sum to the logit.
#include <QtTest>

#include "interpret/activation_hooks.h"
#include "interpret/direct_logit_attribution.h"
#include "interpret/logit_lens.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::vector<int> kTokens = {1, 4, 2, 7, 3, 1, 4, 5};

std::vector<ModelConfig> configs() {
  ModelConfig mlp = smallConfig("softmax", "rope");
  ModelConfig tied = smallConfig("softmax", "learned");
  tied.tied_embeddings = true;
  ModelConfig attnOnly = smallConfig("sigmoid", "alibi");
  attnOnly.attention_only = true;
  ModelConfig gated = smallConfig("softmax", "rope");
  gated.output_gate = "headwise";
  gated.value_gate = true;
  gated.n_kv_heads = 2;
  return {mlp, tied, attnOnly, gated};
}

}  // namespace

class TestInterpretLensDla : public QObject {
  Q_OBJECT

 private slots:
  void lastLayerIsTheModelsLogits() {
    for (const ModelConfig& c : configs()) {
      auto model = randomisedModel(c);
      const LogitLens lens = logitLens(*model, kTokens, 3);
      QCOMPARE(lens.logits.size(), size_t(c.n_layers + 1));
      const Mat logits = runWithHooks(*model, kTokens, nullptr);
      QVERIFY((lens.logits.back().array() == logits.array()).all());
      QCOMPARE(lens.cells.size(), (c.n_layers + 1) * kTokens.size());
      for (const LensCell& cell : lens.cells) {
        QCOMPARE(cell.top.size(), size_t(3));
        QVERIFY(cell.top_probs[0] >= cell.top_probs[1] && cell.top_probs[1] >= cell.top_probs[2]);
        if (cell.layer == c.n_layers) QCOMPARE(cell.rank, 0);  // the default tracks the model's own prediction
        if (cell.rank == 0) QCOMPARE(cell.top[0], cell.token);
        QVERIFY(cell.prob > 0 && cell.prob <= 1);
      }
    }
  }

  void trackedTokenHasItsRank() {
    auto model = randomisedModel(configs()[0]);
    const LogitLens lens = logitLens(*model, kTokens, 9, 6);  // k = vocab: the full order
    for (const LensCell& cell : lens.cells) {
      QCOMPARE(cell.token, 6);
      QCOMPARE(cell.top[cell.rank], 6);
      QVERIFY(std::abs(cell.top_probs[cell.rank] - cell.prob) < 1e-12);
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, logitLens(*model, kTokens, 0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, logitLens(*model, {}, 3));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, logitLens(*model, kTokens, 3, 9));
  }

  void termsSumToTheLogit() {
    for (const ModelConfig& c : configs()) {
      auto model = randomisedModel(c, 0.5f);
      for (int position : {-1, 2})
        for (int token : {-1, 0, 5}) {
          const DirectLogitAttribution d = directLogitAttribution(*model, kTokens, token, position);
          const size_t terms = 2 + c.n_layers * c.n_heads + (c.attention_only ? 0 : 2 * c.n_layers);
          QCOMPARE(d.terms.size(), terms);
          const Mat logits = runWithHooks(*model, kTokens, nullptr);
          QCOMPARE(d.logit, double(logits(position < 0 ? kTokens.size() - 1 : position, d.token)));
          // float64 sums of float32 activations: equal to the float32 logit up to its rounding
          QVERIFY2(std::abs(d.sum - d.logit) < 2e-5 * (1 + std::abs(d.logit)), qPrintable(QString("%1 vs %2").arg(d.sum).arg(d.logit)));
        }
    }
  }
};

QTEST_APPLESS_MAIN(TestInterpretLensDla)
#include "test_interpret_lens_dla.moc"
