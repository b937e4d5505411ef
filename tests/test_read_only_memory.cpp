// What keeps a read-only model near the size of its weights: a model built to be read holds no
// gradients, a product with many more outputs than rows (split over output columns) equals the plain product, and a
// read-only forward does not keep the last pass's logits beside the next pass's activations.
#include <QtTest>

#include "core/random.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/workspace.h"

using namespace attnlab;

namespace {

Mat randomMat(Eigen::Index rows, Eigen::Index cols, uint64_t seed) {
  Rng rng(seed);
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  return m;
}

ModelConfig small() {
  ModelConfig c;
  c.vocab = 40;
  c.d_model = 16;
  c.n_heads = 2;
  c.n_layers = 2;
  c.context = 16;
  return c;
}

}  // namespace

class ReadOnlyMemoryTest : public QObject {
  Q_OBJECT
 private slots:
  void aModelToReadHoldsNoGradients() {
    for (const auto& model : {makeBlankModel(small()), copyModel(Model(small(), 3))})
      for (const auto& p : model->params().all()) {
        QVERIFY2(p->grad.size() == 0, qPrintable(QString::fromStdString(p->name)));
        QVERIFY(p->value.size() > 0);
      }
    Model trains(small(), 3);
    for (const auto& p : trains.params().all()) QCOMPARE(p->grad.size(), p->value.size());
  }

  void aWideOutputEqualsThePlainProduct() {
    // 9,001 outputs: two full column blocks and a ragged third, with a bias, over 130 rows (two
    // threads' row ranges when OpenMP has them).
    const Mat x = randomMat(130, 24, 1), W = randomMat(9001, 24, 2), b = randomMat(1, 9001, 3);
    Mat y;
    ops::linearForward(x, W, &b, y);
    const Mat plain = (x * W.transpose()).rowwise() + b.row(0);
    QCOMPARE(y.rows(), plain.rows());
    QCOMPARE(y.cols(), plain.cols());
    QVERIFY((y - plain).cwiseAbs().maxCoeff() <= 1e-5f * plain.cwiseAbs().maxCoeff());
  }

  void aReadOnlyPassRepeatsTheTrainingPassLogits() {
    // The read-only pass drops each block's activations and the last pass's logits as it goes.
    Model model(small(), 5);
    const std::vector<int> tokens{1, 2, 3, 4, 5, 6}, none(6, -1);
    auto training = makeWorkspace();
    model.forward(*training, tokens.data(), none.data(), 1, 6);
    auto ws = makeWorkspace();
    ws->inference = true;
    for (int pass = 0; pass < 2; ++pass) {
      model.forward(*ws, tokens.data(), none.data(), 1, 6);
      QCOMPARE(ws->logits, training->logits);
    }
  }
};

QTEST_APPLESS_MAIN(ReadOnlyMemoryTest)
#include "test_read_only_memory.moc"
