// The adapters from the engine's analyses to the spectra and embedding views: hand-set W_q, W_k
// give the known eigenvalues, singular values, skew share and RoPE phases; the history of spectra
// grows with the steps, stays bounded and restarts with a new run; the embedding has a query and a
// key glyph per probe token, its top-k lines are the trace's largest weights, and roles follow
// their definition on a hand-made map.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <complex>

#include "attention_map_model.h"
#include "head_selection.h"
#include "data/task.h"
#include "io/config_json.h"
#include "qk_embedding_model.h"
#include "qk_embedding_source.h"
#include "spectrum_history.h"
#include "train/trainer.h"

using namespace attnlab;
using Kind = QkEmbeddingModel::Kind;

namespace {

// A small induction model with RoPE: 2 layers x 2 heads of d_head 4.
ExperimentConfig smallConfig() {
  ExperimentConfig config;
  if (!loadPreset("induction", config).empty()) qFatal("induction preset");
  for (const char* o : {"model.d_model=8", "model.n_layers=2", "model.n_heads=2", "model.positional=rope", "model.context=16"})
    if (!applyOverride(config, o).empty()) qFatal("override %s", o);
  std::string error;
  const std::unique_ptr<Task> task = makeTask(config.task, error);
  if (!task) qFatal("task: %s", error.c_str());
  config.model.vocab = task->vocabulary().size();
  return config;
}

std::shared_ptr<const RunData> runOf(const ExperimentConfig& config) {
  auto run = std::make_shared<RunData>();
  run->config = config;
  std::string error;
  const std::unique_ptr<Task> task = makeTask(config.task, error);
  if (!task) qFatal("task: %s", error.c_str());
  run->vocabulary = std::make_shared<const Vocabulary>(task->vocabulary());
  return run;
}

// A trace of `tokens` at `step`, carrying its model snapshot.
std::shared_ptr<const TraceSnapshot> traceAt(int step, std::shared_ptr<const Model> model, std::shared_ptr<const RunData> run,
                                             const std::vector<int>& tokens) {
  auto snapshot = std::make_shared<ModelSnapshot>();
  snapshot->step = step;
  snapshot->model = model;
  snapshot->run = run;
  auto trace = std::make_shared<TraceSnapshot>();
  trace->step = step;
  trace->trace = traceModel(*model, *run->vocabulary, tokens);
  trace->vocabulary = run->vocabulary;
  trace->model = snapshot;
  return trace;
}

bool near(double a, double b) { return std::abs(a - b) < 1e-5; }

}  // namespace

class TestViewAdapters : public QObject {
  Q_OBJECT
 private slots:
  void handSetProjectionsGiveTheKnownSpectrum() {
    const ExperimentConfig config = smallConfig();
    auto model = std::make_shared<Model>(config.model, 3);
    // Head 0 of layer 0: W_q = [I 0], W_k = [D 0], so S = W_k W_q^T = D and M = W_q^T W_k = [D 0; 0 0]
    // with D = [0 -2 0 0; 2 0 0 0; 0 0 3 0; 0 0 0 1]: eigenvalues 3, +-2i, 1; singular values
    // 3, 2, 2, 1; ||M||^2 = 18 of which the skew part [0 -2; 2 0] holds 8; D is normal.
    Mat& wq = model->params().find("blocks.0.attn.wq.weight")->value;
    Mat& wk = model->params().find("blocks.0.attn.wk.weight")->value;
    wq.topRows(4).setZero();
    wk.topRows(4).setZero();
    for (int i = 0; i < 4; ++i) wq(i, i) = 1;
    wk(0, 1) = -2, wk(1, 0) = 2, wk(2, 2) = 3, wk(3, 3) = 1;
    ModelSnapshot snapshot;
    snapshot.step = 7;
    snapshot.model = model;
    const SpectrumSnapshot frame = spectrumFrame(snapshot);
    QCOMPARE(frame.step, 7);
    QCOMPARE(frame.heads.size(), size_t(4));  // every head of every layer
    const HeadSpectrum& h = frame.heads[0];
    QCOMPARE(h.layer, 0);
    QCOMPARE(h.head, 0);
    QCOMPARE(h.eigenvalues.size(), size_t(4));
    for (std::complex<double> expected : {std::complex<double>(3, 0), {0, 2}, {0, -2}, {1, 0}})
      QVERIFY2(std::any_of(h.eigenvalues.begin(), h.eigenvalues.end(), [&](auto z) { return std::abs(z - expected) < 1e-5; }),
               qPrintable(QString("missing eigenvalue %1%2i").arg(expected.real()).arg(expected.imag())));
    QCOMPARE(h.singularValues.size(), size_t(4));
    const double singular[] = {3, 2, 2, 1};
    for (int i = 0; i < 4; ++i) QVERIFY(near(h.singularValues[i], singular[i]));
    QVERIFY(near(h.skewEnergyShare, 8.0 / 18));
    QVERIFY(near(h.nonNormality, 0));
    // RoPE pairs: block [0 -2; 2 0] is z = 2i (|z| 2, phase pi/2); block [3 0; 0 1] is z = 2.
    QCOMPARE(h.rope.size(), size_t(2));
    QVERIFY(near(h.rope[0].magnitude, 2) && near(h.rope[0].phase, M_PI / 2) && near(h.rope[0].frequency, 1));
    QVERIFY(near(h.rope[1].magnitude, 2) && near(h.rope[1].phase, 0));

    // The null: circular-law radius s^2 sqrt(d_model d_head) of the fresh draw, every head drawn.
    const SpectrumSeries null = spectrumNull(config.model, 11);
    const Model fresh(config.model, 11);
    const Mat& freshKeys = fresh.params().find("blocks.0.attn.wk.weight")->value;
    const double s2 = freshKeys.topRows(4).cast<double>().squaredNorm() / (4 * 8);  // head 0's keys
    QVERIFY(std::abs(null.nullRadius - s2 * std::sqrt(8.0 * 4)) < 1e-9 * null.nullRadius);
    QVERIFY(!null.nullSymmetric);
    QCOMPARE(null.nullDraw.size(), size_t(4));
    for (const HeadSpectrum& d : null.nullDraw) QCOMPARE(d.eigenvalues.size(), size_t(4));
  }

  void historyGrowsWithTheStepsAndStaysBounded() {
    const ExperimentConfig config = smallConfig();
    auto run = runOf(config);
    auto model = std::make_shared<const Model>(config.model, 1);
    const std::vector<int> tokens = {1, 2, 3, 1, 2, 3};
    AttentionMapModel attention;
    HeadSelection attentionSelection(&attention);
    SpectrumHistory history(&attention, nullptr, 8);
    QCOMPARE(history.series()->snapshots.size(), size_t(0));
    for (int step = 0; step <= 40; ++step) {
      attention.setTrace(traceAt(step, model, run, tokens));
      history.job().waitForIdle();
      const auto& frames = history.series()->snapshots;
      if (step < 8) QCOMPARE(int(frames.size()), step + 1);  // one frame per new step
      QVERIFY(frames.size() <= 8);
      QCOMPARE(frames.front()->step, 0);
      QCOMPARE(frames.back()->step, step);  // the latest is always there
      for (size_t i = 1; i < frames.size(); ++i) QVERIFY(frames[i]->step > frames[i - 1]->step);
      QCOMPARE(frames.back()->heads.size(), size_t(4));
    }
    QVERIFY(history.stride() > 1);
    QVERIFY(history.series()->snapshots.size() >= 4);  // thinning keeps half at least
    QVERIFY(history.series()->nullRadius > 0);
    QCOMPARE(history.series()->nullDraw.size(), size_t(4));

    attention.setTrace(traceAt(40, model, run, {1, 2}));  // a probe edit at the same step: no frame
    history.job().waitForIdle();
    QCOMPARE(history.series()->snapshots.back()->step, 40);

    attention.setTrace(traceAt(3, model, runOf(config), tokens));  // another run starts anew
    history.job().waitForIdle();
    QCOMPARE(history.series()->snapshots.size(), size_t(1));
    QCOMPARE(history.series()->snapshots.front()->step, 3);
    QCOMPARE(history.stride(), 1);
    attention.clear();
    QCOMPARE(history.series()->snapshots.size(), size_t(0));
  }

  void rolesFollowTheirDefinition() {
    // Tokens a b c a b; each query's heaviest key: 0 -> 0, 1 -> 0 (previous), 2 -> 1 (previous),
    // 3 -> 3 (itself), 4 -> 2 (after the earlier b: the induction target).
    Mat weights = Mat::Zero(5, 5);
    weights(0, 0) = 1;
    weights(1, 0) = 0.7f, weights(1, 1) = 0.3f;
    weights(2, 1) = 0.6f, weights(2, 0) = 0.4f;
    weights(3, 3) = 0.5f, weights(3, 0) = 0.25f, weights(3, 1) = 0.25f;
    weights(4, 2) = 0.8f, weights(4, 0) = 0.2f;
    const TokenRoles roles = tokenRoles(weights, {0, 1, 2, 0, 1});
    QCOMPARE(roles.queries, (std::vector<std::string>{"query \u2192 itself", "query \u2192 previous token",
                                                       "query \u2192 previous token", "query \u2192 itself",
                                                       "query \u2192 induction target"}));
    QCOMPARE(roles.keys, (std::vector<std::string>{"key: first token", "key: previous token", "key: induction target",
                                                    "key: other", "key: other"}));
  }

  void embeddingCarriesTheTraceWeights() {
    const ExperimentConfig config = smallConfig();
    auto run = runOf(config);
    auto model = std::make_shared<const Model>(config.model, 5);
    const std::vector<int> tokens = {4, 5, 6, 7, 8, 4, 5, 6, 7, 8};
    AttentionMapModel attention;
    HeadSelection attentionSelection(&attention);
    QkEmbeddingModel embedding;
    QkEmbeddingSource source(&attentionSelection, &embedding);
    attention.setTrace(traceAt(10, model, run, tokens));
    source.job().waitForIdle();
    QVERIFY(!embedding.hasData());  // inactive (the tab hidden): nothing computed
    source.setActive(true);
    source.job().waitForIdle();
    QVERIFY(embedding.hasData());
    const int T = static_cast<int>(tokens.size());
    QCOMPARE(embedding.count(Kind::Query) + embedding.count(Kind::Key), 2 * T);  // a glyph per query and per key
    QVERIFY(std::isfinite(embedding.data()->dotDistanceCorrelation));
    QVERIFY(std::abs(embedding.data()->dotDistanceCorrelation) <= 1);

    const HeadTrace& head = attention.snapshot()->trace.layers[0].heads[0];
    embedding.setTopK(3);
    for (int q = 0; q < T; ++q) {
      QCOMPARE(embedding.token(Kind::Query, q).position, q);
      QCOMPARE(embedding.token(Kind::Key, q).token, run->vocabulary->token(tokens[q]));
      embedding.selectQuery(q);
      std::vector<int> keys(q + 1);
      for (int k = 0; k <= q; ++k) keys[k] = k;
      std::stable_sort(keys.begin(), keys.end(), [&](int a, int b) { return head.weights(q, a) > head.weights(q, b); });
      const auto lines = embedding.selectedLines();
      QCOMPARE(int(lines.size()), std::min(3, q + 1));
      for (size_t i = 0; i < lines.size(); ++i) {
        QCOMPARE(lines[i].key, keys[i]);
        QCOMPARE(lines[i].weight, head.weights(q, keys[i]));
      }
    }

    attentionSelection.select(1, 1);  // the shared selection picks the head
    source.job().waitForIdle();
    QCOMPARE(embedding.data()->layer, 1);
    QCOMPARE(embedding.data()->head, 1);
    attention.clear();
    QVERIFY(!embedding.hasData());
  }
};

QTEST_MAIN(TestViewAdapters)
#include "test_view_adapters.moc"
