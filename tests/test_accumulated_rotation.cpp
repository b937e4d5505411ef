// The accumulated token-dependent rotation: gradients of its parameters (and of the value
// rotation), its exact equality with RoPE under constant increments, causality of the running
// sum, the random fixed table, bad settings, and that it learns induction.
#include <QtTest>

#include <chrono>
#include <cmath>

#include "attention/attention.h"
#include "grad_check.h"
#include "io/config_json.h"
#include "model/model.h"
#include "model/workspace.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
ModelConfig small(bool rotateValues, double fraction = 1.0) {
  ModelConfig c;
  c.vocab = 7;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 2;  // d_head 8: 4 pairs
  c.d_ff = 12;
  c.context = 12;
  c.positional = "accumulated_rotation";
  c.positional_settings = {{"theta", 100}, {"rotary_fraction", fraction}, {"rotate_values", rotateValues ? 1 : 0}};
  return c;
}

// Runs a forward pass on B=2 fixed sequences and returns the workspace (scores, angles, logits).
std::unique_ptr<Workspace> run(const Model& model, const std::vector<int>& tokens, int T) {
  auto ws = makeWorkspace();
  std::vector<int> targets(tokens.size(), 0);
  model.forward(*ws, tokens.data(), targets.data(), static_cast<int>(tokens.size()) / T, T);
  return ws;
}

std::vector<int> someTokens(int n, int vocab, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = rng.uniformInt(0, vocab - 1);
  return tokens;
}

// Largest |a - b| over the causal (visible) entries of two [B, H, T, T] score buffers.
float causalScoreDifference(const std::vector<float>& a, const std::vector<float>& b, int T) {
  float worst = 0;
  for (size_t map = 0; map < a.size() / (T * T); ++map)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) worst = std::max(worst, std::abs(a[map * T * T + i * T + j] - b[map * T * T + i * T + j]));
  return worst;
}
}  // namespace

class TestAccumulatedRotation : public QObject {
  Q_OBJECT

 private slots:
  void gradients_data() {
    QTest::addColumn<int>("omegaMode");
    QTest::addColumn<bool>("rotateValues");
    QTest::addColumn<double>("fraction");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<QString>("attention");
    QTest::newRow("learned") << 0 << false << 1.0 << 0 << "softmax";
    QTest::newRow("learned, rotated values") << 0 << true << 1.0 << 0 << "softmax";
    QTest::newRow("learned, rotated values, fraction 0.5, MQA") << 0 << true << 0.5 << 1 << "softmax";
    QTest::newRow("random table, rotated values") << 1 << true << 1.0 << 0 << "softmax";
    QTest::newRow("hybrid softmax/sigmoid, rotated values") << 0 << true << 1.0 << 0 << "softmax,sigmoid";
  }
  void gradients() {
    QFETCH(int, omegaMode);
    QFETCH(bool, rotateValues);
    QFETCH(double, fraction);
    QFETCH(int, kvHeads);
    QFETCH(QString, attention);
    ModelConfig c = small(rotateValues, fraction);
    c.positional_settings["omega_mode"] = omegaMode;
    c.n_kv_heads = kvHeads;
    c.attention.clear();
    for (const QString& name : attention.split(',')) c.attention.push_back(name.toStdString());
    for (const auto& name : c.attention)
      if (!AttentionRegistry::instance().find(name)) QSKIP(qPrintable(QString::fromStdString("variant '" + name + "' is not registered")));
    Model model(c, 7);
    // Learned increments are parameters of every layer; the random table is not a parameter.
    QCOMPARE(model.params().find("blocks.1.pos.omega.weight") != nullptr, omegaMode == 0);
    QCOMPARE(model.params().find("blocks.1.pos.omega.bias") != nullptr, omegaMode == 0);
    testing::randomiseParams(model, 11);
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), QTest::currentDataTag());
  }

  // With constant increments (W = 0, b = softplus^-1(freq_m)), phi_t = (t+1) freq_m: RoPE's
  // angle plus one step, which cancels in q.k, so every score, weight and logit equals RoPE's.
  void constantIncrementsEqualRope_data() {
    QTest::addColumn<double>("fraction");
    QTest::newRow("all pairs") << 1.0;
    QTest::newRow("fraction 0.5") << 0.5;
  }
  void constantIncrementsEqualRope() {
    QFETCH(double, fraction);
    ModelConfig c = small(false, fraction);
    ModelConfig ropeConfig = c;
    ropeConfig.positional = "rope";
    ropeConfig.positional_settings = {{"theta", 100}, {"rotary_fraction", fraction}};
    Model rope(ropeConfig, 5), accumulated(c, 9);
    testing::randomiseParams(rope, 2);
    for (auto& p : accumulated.params().all()) {
      if (const Param* same = rope.params().find(p->name)) {
        p->value = same->value;
      } else if (p->name.find(".pos.omega.weight") != std::string::npos) {
        p->value.setZero();  // increments independent of the token
      } else {
        QVERIFY2(p->name.find(".pos.omega.bias") != std::string::npos, p->name.c_str());
        // initialise() set b_m = softplus^-1(freq_m): omega_m = freq_m exactly as RoPE's step
      }
    }
    const int T = c.context;
    const std::vector<int> tokens = someTokens(2 * T, c.vocab, 4);
    auto wsRope = run(rope, tokens, T), wsAcc = run(accumulated, tokens, T);

    // The angle tables: accumulated = RoPE + one step (RoPE's angle at t = 1), in both sequences.
    const Mat& ropeAngles = wsRope->blocks[0].attn.angles;
    const Mat& accAngles = wsAcc->blocks[0].attn.angles;
    QCOMPARE(accAngles.rows(), ropeAngles.rows());
    QCOMPARE(accAngles.cols(), static_cast<Eigen::Index>(std::lround(fraction * 4)));
    for (Eigen::Index r = 0; r < accAngles.rows(); ++r)
      for (Eigen::Index m = 0; m < accAngles.cols(); ++m)
        QVERIFY2(std::abs(accAngles(r, m) - ropeAngles(r, m) - ropeAngles(1, m)) < 1e-5f * (1 + ropeAngles(r, m)),
                 qPrintable(QString("angle row %1 pair %2: %3 vs RoPE %4").arg(r).arg(m).arg(accAngles(r, m)).arg(ropeAngles(r, m))));

    for (int l = 0; l < c.n_layers; ++l) {
      const float err = causalScoreDifference(wsAcc->blocks[l].attn.scores, wsRope->blocks[l].attn.scores, T);
      QVERIFY2(err < 1e-5f, qPrintable(QString("layer %1 scores differ from RoPE's by %2").arg(l).arg(err)));
    }
    const float logitErr = (workspaceLogits(*wsAcc) - workspaceLogits(*wsRope)).cwiseAbs().maxCoeff();
    QVERIFY2(logitErr < 1e-5f, qPrintable(QString("logits differ from RoPE's by %1").arg(logitErr)));

    // And the equality is not vacuous: token-dependent increments change the scores.
    for (auto& p : accumulated.params().all())
      if (p->name.find(".pos.omega.weight") != std::string::npos) p->value.setConstant(0.3f);
    auto wsTokenDependent = run(accumulated, tokens, T);
    QVERIFY(causalScoreDifference(wsTokenDependent->blocks[0].attn.scores, wsRope->blocks[0].attn.scores, T) > 1e-3f);
  }

  // phi_t sums increments of tokens s <= t only: changing token s leaves earlier angles exactly as
  // they were and changes phi_t for every t >= s (the increment is read from the token).
  void angleIsARunningSumOverEarlierTokens() {
    ModelConfig c = small(true);
    Model model(c, 3);
    testing::randomiseParams(model, 6);
    const int T = c.context, s = 5;
    std::vector<int> tokens = someTokens(T, c.vocab, 8);
    auto before = run(model, tokens, T);
    tokens[s] = (tokens[s] + 1) % c.vocab;
    auto after = run(model, tokens, T);
    const Mat& a = before->blocks[0].attn.angles;
    const Mat& b = after->blocks[0].attn.angles;
    for (int t = 0; t < T; ++t) {
      const float change = (a.row(t) - b.row(t)).cwiseAbs().maxCoeff();
      if (t < s)
        QVERIFY2(change == 0.0f, qPrintable(QString("angle at %1 moved by %2").arg(t).arg(change)));
      else
        QVERIFY2(change > 1e-4f, qPrintable(QString("angle at %1 ignores the changed token").arg(t)));
    }
    for (Eigen::Index i = 0; i < a.size(); ++i) QVERIFY(a.data()[i] > 0.0f);  // softplus increments are positive
  }

  // Position 0 attends only to itself, so turning v_0 by phi_0 and o_0 back by -phi_0 must give
  // exactly the unrotated output there; later positions see relative phases and change.
  void valueRotationCancelsOnSelfAttention() {
    Model plain(small(false), 4), rotated(small(true), 4);
    testing::randomiseParams(plain, 5);
    for (auto& p : rotated.params().all()) p->value = plain.params().find(p->name)->value;
    const int T = 6;
    const std::vector<int> tokens = someTokens(T, 7, 1);
    auto a = run(plain, tokens, T), b = run(rotated, tokens, T);
    const Mat& la = workspaceLogits(*a);
    const Mat& lb = workspaceLogits(*b);
    QVERIFY2((la.row(0) - lb.row(0)).cwiseAbs().maxCoeff() < 1e-5f, "first position changed under value rotation");
    QVERIFY((la.bottomRows(T - 1) - lb.bottomRows(T - 1)).cwiseAbs().maxCoeff() > 1e-4f);
  }

  // omega_mode 1: a fixed table per token id drawn from the seed, shared by the layers, no parameters.
  void randomTableIsFixedPerTokenAndSeed() {
    ModelConfig c = small(false);
    c.positional_settings["omega_mode"] = 1;
    auto pe = PositionalRegistry::instance().create("accumulated_rotation");
    ParamStore none;
    QVERIFY(pe->configure(c, none).empty());
    QVERIFY(!pe->rotaryAnglesNeedGradient());
    QCOMPARE(none.all().size(), size_t(0));

    const int T = c.context;
    const std::vector<int> tokens = {0, 3, 3, 5, 0, 6, 1, 3, 2, 4, 0, 5};
    Model a(c, 21), b(c, 21), other(c, 22);
    auto wa = run(a, tokens, T), wb = run(b, tokens, T), wo = run(other, tokens, T);
    const Mat& angles = wa->blocks[0].attn.angles;
    QVERIFY(angles == wb->blocks[0].attn.angles);                             // same seed, same table
    QVERIFY(angles == wa->blocks[1].attn.angles);                             // one table for all layers
    QVERIFY((angles - wo->blocks[0].attn.angles).cwiseAbs().maxCoeff() > 1e-3f);  // another seed, another table
    QCOMPARE(workspaceLogits(*wa), workspaceLogits(*wb));
    // A copy (what the trainer hands the views) keeps the table, which is not a parameter.
    const std::unique_ptr<Model> copy = copyModel(a);
    QVERIFY(run(*copy, tokens, T)->blocks[0].attn.angles == angles);
    // Increments: the same token always adds the same angle, within [0, 2 freq_m], freq_m = 100^(-2m/8).
    auto increment = [&](int t) { return RowVec(t == 0 ? RowVec(angles.row(0)) : RowVec(angles.row(t) - angles.row(t - 1))); };
    for (int t : {2, 7}) QVERIFY((increment(t) - increment(1)).cwiseAbs().maxCoeff() < 1e-5f);  // token 3
    QVERIFY((increment(4) - increment(0)).cwiseAbs().maxCoeff() < 1e-5f);                     // token 0
    for (int t = 0; t < T; ++t)
      for (int m = 0; m < 4; ++m) {
        const float omega = increment(t)(m);
        QVERIFY(omega >= -1e-5f && omega <= 2 * std::pow(100.0, -2.0 * m / 8) + 1e-5);
      }
  }

  void badSettingsGiveOneLineReasons() {
    ExperimentConfig e;
    e.model = small(false);
    e.model.vocab = 0;
    QVERIFY(validate(e).empty());
    e.model.positional_settings["omega_mode"] = 2;
    QVERIFY2(validate(e).find("omega_mode") != std::string::npos, validate(e).c_str());
    e.model = small(false);
    e.model.positional_settings["rotate_values"] = 0.5;
    QVERIFY2(validate(e).find("rotate_values") != std::string::npos, validate(e).c_str());
    e.model = small(false);
    e.model.n_heads = 16;  // d_head 1
    QVERIFY2(validate(e).find("even head dimension") != std::string::npos, validate(e).c_str());
    ModelConfig odd = small(false);
    odd.d_model = 6;
    odd.n_heads = 2;  // d_head 3
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Model(odd, 1));
  }

  // The shipped induction preset with accumulated rotation (learned increments) reaches >= 95%
  // in half the preset's steps (measured: 0.998-1.0 at 300 steps over three seeds, with and
  // without value rotation; about 50 s of CPU time, under a minute on two cores).
  void learnsInduction() {
    ExperimentConfig c;
    QVERIFY(loadPreset("induction", c).empty());
    QVERIFY(applyOverride(c, "model.positional=accumulated_rotation").empty());
    QVERIFY(applyOverride(c, "train.steps=300").empty());
    // Measured with the pads the preset used to have (0.17 in 300 steps on its dealt prefix): see
    // test_variant_learning.
    QVERIFY(applyOverride(c, "task.settings.dealt_prefix=0").empty());
    const auto start = std::chrono::steady_clock::now();
    Trainer t(c);
    while (!t.finished()) t.trainStep();
    const EvalResult r = t.evaluate(16);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    qInfo("induction with accumulated_rotation: %d steps in %.1f s, accuracy %.4f", t.stepsDone(), seconds, r.accuracy);
    QVERIFY2(r.accuracy >= 0.95, qPrintable(QString("induction accuracy %1").arg(r.accuracy)));
  }
};

QTEST_APPLESS_MAIN(TestAccumulatedRotation)
#include "test_accumulated_rotation.moc"
