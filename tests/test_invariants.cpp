// Exact invariants of softmax attention and the positional encodings.
#include <QtTest>

#include "model_support.h"

#include <cmath>

#include "core/random.h"
#include "model/model.h"
#include "model/workspace.h"
#include "positional/alibi.h"
#include "positional/positional.h"

using namespace attnlab;

namespace {
using testing::smallConfig;
using testing::traceOf;
}  // namespace

class TestInvariants : public QObject {
  Q_OBJECT

 private slots:
  void softmaxRowsSumToOneOverVisibleKeys_data() {
    QTest::addColumn<QString>("positional");
    for (const char* name : {"none", "learned", "rope", "alibi", "alibi_log"}) QTest::newRow(name) << name;
  }
  void softmaxRowsSumToOneOverVisibleKeys() {
    QFETCH(QString, positional);
    const ModelConfig c = smallConfig("softmax", positional.toStdString());
    Model model(c, 3);
    const Trace trace = traceOf(model, {1, 4, 2, 8, 0, 3, 3, 5, 7, 6, 2, 1});
    QCOMPARE(static_cast<int>(trace.layers.size()), c.n_layers);
    for (const LayerTrace& layer : trace.layers) {
      QCOMPARE(static_cast<int>(layer.heads.size()), c.n_heads);
      for (const HeadTrace& head : layer.heads) {
        const int T = static_cast<int>(head.weights.rows());
        for (int i = 0; i < T; ++i) {
          double sum = 0;
          for (int j = 0; j < T; ++j) {
            if (j > i) {
              QCOMPARE(head.weights(i, j), 0.0f);  // exactly zero above the diagonal
              QVERIFY(std::isinf(head.scores(i, j)) && head.scores(i, j) < 0);
            } else {
              QVERIFY(head.weights(i, j) > 0.0f);
              sum += head.weights(i, j);
            }
          }
          QVERIFY2(std::abs(sum - 1.0) < 1e-5, qPrintable(QString("row %1 sums to %2").arg(i).arg(sum, 0, 'g', 10)));
        }
      }
    }
  }

  // RoPE makes q.k depend on i - j only: shifting every position by the same offset keeps all scores.
  void ropeScoresAreShiftInvariant() {
    ModelConfig c = smallConfig("softmax", "rope");
    ParamStore params;
    auto rope = PositionalRegistry::instance().create("rope");
    QVERIFY(rope);
    QVERIFY(rope->configure(c, params).empty());
    const int T = 6, dHead = c.headDim(), pairs = rope->rotaryPairs();
    QCOMPARE(pairs, dHead / 2);
    Rng rng(5);
    Mat q(T, dHead), k(T, dHead);
    for (Eigen::Index i = 0; i < q.size(); ++i) q.data()[i] = rng.normal(), k.data()[i] = rng.normal();
    auto scoresAt = [&](int offset) {
      std::vector<int> pos(T);
      for (int t = 0; t < T; ++t) pos[t] = t + offset;
      Mat angles, qr = q, kr = k;
      rope->rotaryAngles(0, Mat(), pos.data(), 1, T, angles);
      rotatePairs(qr.data(), T, dHead, angles.data(), pairs, false);
      rotatePairs(kr.data(), T, dHead, angles.data(), pairs, false);
      return Mat(qr * kr.transpose());
    };
    const Mat base = scoresAt(0);
    for (int offset : {1, 7, 100, 1000}) {
      const float err = (scoresAt(offset) - base).cwiseAbs().maxCoeff();
      QVERIFY2(err < 1e-3f, qPrintable(QString("offset %1 changes scores by %2").arg(offset).arg(err)));
    }
    // And the rotation really does something: scores differ from the unrotated q k^T.
    QVERIFY((base - q * k.transpose()).cwiseAbs().maxCoeff() > 1e-2f);
  }

  void alibiSlopesAsDefined() {
    // m_h = 2^(-8h/H), h = 1..H: for 8 heads 1/2, 1/4, ..., 1/256.
    for (int h = 0; h < 8; ++h) QCOMPARE(alibiSlope(h, 8), std::pow(2.0, -(h + 1)));
    for (int h = 0; h < 4; ++h) QCOMPARE(alibiSlope(h, 4), std::pow(2.0, -2.0 * (h + 1)));
    ModelConfig c = smallConfig("softmax", "alibi");
    ParamStore params;
    for (const char* name : {"alibi", "alibi_log"}) {
      auto pe = PositionalRegistry::instance().create(name);
      QVERIFY(pe && pe->configure(c, params).empty() && pe->scoreBias());
      const int T = 5;
      std::vector<int> pos = {0, 1, 2, 3, 4};
      for (int h = 0; h < 4; ++h) {
        std::vector<float> bias(T * T, 0.0f);
        pe->addScoreBias(h, 4, pos.data(), T, pos.data(), T, bias.data());
        for (int i = 0; i < T; ++i)
          for (int j = 0; j <= i; ++j) {
            const double d = i - j;
            const double expected = -alibiSlope(h, 4) * (std::string(name) == "alibi" ? d : std::log1p(d));
            QVERIFY(std::abs(bias[i * T + j] - expected) < 1e-6);
          }
      }
    }
  }

  void deterministicForSeed() {
    const ModelConfig c = smallConfig("softmax", "rope");
    Model a(c, 42), b(c, 42), other(c, 43);
    for (size_t i = 0; i < a.params().all().size(); ++i) {
      QVERIFY(a.params().all()[i]->value == b.params().all()[i]->value);
    }
    QVERIFY(a.params().find("tok_emb.weight")->value != other.params().find("tok_emb.weight")->value);
  }

  // copyModel: the same function (bit-equal logits) in independent storage, head gains off.
  void aCopyComputesTheSameAndOwnsItsWeights() {
    ModelConfig c = smallConfig("softmax", "rope");
    c.attention = {"softmax", "sigmoid"};
    Model original(c, 7);
    original.setHeadGains({{1, 0, 1, 1}, {1, 1, 1, 1}});
    const std::unique_ptr<Model> copy = copyModel(original);
    original.setHeadGains({});
    const std::vector<int> tokens{1, 4, 2, 8, 5, 7, 3};
    const std::vector<int> targets(tokens.size(), -1);
    auto wa = makeWorkspace(), wb = makeWorkspace();
    original.forward(*wa, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()));
    copy->forward(*wb, tokens.data(), targets.data(), 1, static_cast<int>(tokens.size()));
    QVERIFY(workspaceLogits(*wa) == workspaceLogits(*wb));
    original.params().find("tok_emb.weight")->value.setZero();
    QVERIFY(!copy->params().find("tok_emb.weight")->value.isZero());
  }
};

QTEST_APPLESS_MAIN(TestInvariants)
#include "test_invariants.moc"
