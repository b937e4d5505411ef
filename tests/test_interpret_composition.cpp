// Head composition: the d_head-sized factorisation against the d_model x d_model products it
// stands for, exact zeros when an earlier head writes into the kernel of a later head's reading
// matrices, and the OV copying score against the eigenvalues of the full vocabulary circuit.
#include <QtTest>

#include <Eigen/Eigenvalues>

#include "interpret/head_composition.h"
#include "interpret/interpret_support.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

using Md = Eigen::MatrixXd;

double ratio(const Md& product, const Md& later, const Md& earlier) { return product.norm() / (later.norm() * earlier.norm()); }

ModelConfig twoLayers() {
  ModelConfig c = smallConfig("softmax", "rope");
  c.n_heads = 2;  // d_head 8 of d_model 16: room for a kernel
  return c;
}

}  // namespace

class TestInterpretComposition : public QObject {
  Q_OBJECT

 private slots:
  void factorisationMatchesTheFullProducts() {
    ModelConfig c = twoLayers();
    c.n_layers = 3;
    auto model = randomisedModel(c);
    const HeadComposition hc = headComposition(*model);
    QCOMPARE(hc.pairs.size(), size_t(3 * 2 * 2));  // (0->1, 0->2, 1->2) x 2 x 2 heads
    for (const CompositionScore& s : hc.pairs) {
      const HeadWeights a = headWeights(*model, s.from_layer, s.from_head), b = headWeights(*model, s.to_layer, s.to_head);
      const Md ov1 = a.o * a.v, qk2 = b.q.transpose() * b.k, ov2 = b.o * b.v;
      QVERIFY(std::abs(s.k - ratio(qk2 * ov1, qk2, ov1)) < 1e-9);
      QVERIFY(std::abs(s.q - ratio(qk2.transpose() * ov1, qk2, ov1)) < 1e-9);
      QVERIFY(std::abs(s.v - ratio(ov2 * ov1, ov2, ov1)) < 1e-9);
      QVERIFY(s.k > 0 && s.k < 1);
    }
  }

  // Head 0.0 writes only into dimensions 8..15, which head 1.0's keys (K), queries (Q) and values
  // (V) never read: its image lies in the kernel of W_QK (and of W_OV), so all three scores are 0.
  void imageInTheKernelScoresZero() {
    auto model = randomisedModel(twoLayers());
    ParamStore& p = model->params();
    p.find("blocks.0.attn.wo.weight")->value.block(0, 0, 8, 8).setZero();  // head 0's columns, rows 0..7
    for (const char* name : {"blocks.1.attn.wk.weight", "blocks.1.attn.wq.weight", "blocks.1.attn.wv.weight"})
      p.find(name)->value.block(0, 8, 8, 8).setZero();  // head 0's rows, columns 8..15
    const HeadComposition hc = headComposition(*model);
    for (const CompositionScore& s : hc.pairs) {
      if (s.from_head == 0 && s.to_head == 0) {
        QCOMPARE(s.k, 0.0);
        QCOMPARE(s.q, 0.0);
        QCOMPARE(s.v, 0.0);
      } else {
        QVERIFY(s.k > 0);
      }
    }
  }

  void copyingScoreIsTheFullCircuitsEigenvalueRatio() {
    auto model = randomisedModel(twoLayers());
    const HeadComposition hc = headComposition(*model);
    const Md E = embedding(*model), U = foldedUnembedding(*model);
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) {
        const HeadWeights w = headWeights(*model, l, h);
        const Md full = U * w.o * w.v * E.transpose();  // [vocab, vocab]
        const Eigen::VectorXcd lambda = Eigen::EigenSolver<Md>(full, false).eigenvalues();
        const double want = lambda.real().sum() / lambda.cwiseAbs().sum();
        QVERIFY2(std::abs(hc.copying[l][h] - want) < 1e-6, qPrintable(QString("%1 vs %2").arg(hc.copying[l][h]).arg(want)));
      }
    // A head whose OV circuit maps each embedding onto its own unembedding copies perfectly.
    ModelConfig c = twoLayers();
    c.tied_embeddings = true;
    c.d_model = 16;
    c.n_heads = 1;
    auto copier = randomisedModel(c);
    ParamStore& p = copier->params();
    for (const char* name : {"blocks.0.ln1.weight", "ln_f.weight"}) p.find(name)->value.setOnes();
    p.find("blocks.0.attn.wv.weight")->value.setIdentity();
    p.find("blocks.0.attn.wo.weight")->value.setIdentity();
    QVERIFY(std::abs(headComposition(*copier).copying[0][0] - 1.0) < 1e-9);  // E E^T is positive semi-definite
  }
};

QTEST_APPLESS_MAIN(TestInterpretComposition)
#include "test_interpret_composition.moc"
