// Separate learning rates for the QK and OV circuits (train.qk_lr_ratio, ov_lr_ratio, per layer
// and step window): ratios 1 reproduce the baseline bit for bit, a ratio scales exactly its
// circuit's first update and leaves every other tensor's bit for bit, and bad values are refused.
#include <QtTest>

#include <omp.h>

#include "model_support.h"
#include "train/circuit_lr.h"
#include "train/optimizer.h"
#include "train/trainer.h"

using namespace attnlab;

namespace {
ExperimentConfig baseline() {
  ExperimentConfig e;
  e.model = testing::smallConfig("softmax", "rope", 0, 16);
  e.task.name = "induction";
  e.task.settings = {{"length", 8}};
  e.train.steps = 6;
  e.train.batch = 4;
  e.train.warmup = 0;
  e.train.threads = 1;
  e.train.eval_every = 0;
  return e;
}

std::unique_ptr<Trainer> trained(const ExperimentConfig& e, int steps) {
  auto t = std::make_unique<Trainer>(e);
  for (int s = 0; s < steps; ++s) t->trainStep();
  return t;
}

const Mat& valueOf(const Trainer& t, const std::string& name) { return t.model().params().find(name)->value; }
}  // namespace

class TestCircuitLr : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  // Ratios of exactly 1 through the optimiser's per-parameter path: the same bits as without.
  void ratiosOfOneAreTheBaselineBitForBit() {
    auto a = std::make_unique<Model>(testing::smallConfig("softmax", "rope"), 3);
    auto b = copyModel(*a);
    TrainConfig config;
    AdamW oa(a->params(), config), ob(b->params(), config);
    Rng rng(8);
    for (int s = 0; s < 3; ++s) {
      for (size_t i = 0; i < a->params().all().size(); ++i) {
        Mat& g = a->params().all()[i]->grad;
        for (Eigen::Index k = 0; k < g.size(); ++k) g.data()[k] = rng.normal(0.f, 1.f);
        b->params().all()[i]->grad = g;
      }
      const std::vector<float> ones(a->params().all().size(), 1.0f);
      oa.step(1e-2);
      ob.step(1e-2, &ones);
    }
    for (size_t i = 0; i < a->params().all().size(); ++i) QVERIFY(a->params().all()[i]->value == b->params().all()[i]->value);
    // and through the trainer with every setting spelled out
    ExperimentConfig spelled = baseline();
    spelled.train.qk_lr_ratio = 1;
    spelled.train.ov_lr_ratio = 1;
    spelled.train.lr_ratio_layers = "1";
    spelled.train.lr_ratio_from = 2;
    const auto x = trained(baseline(), 4), y = trained(spelled, 4);
    for (size_t i = 0; i < x->model().params().all().size(); ++i)
      QVERIFY(x->model().params().all()[i]->value == y->model().params().all()[i]->value);
  }

  // After one step at rho = 3, W_q and W_k moved 3x as far as the baseline's (Adam's step is
  // proportional to lr) and every other tensor is bit for bit the baseline's.
  void aRatioScalesItsCircuitOnly() {
    ExperimentConfig fast = baseline();
    fast.train.qk_lr_ratio = 3;
    fast.train.lr_ratio_layers = "1";
    const auto start = std::make_unique<Trainer>(baseline());
    const auto base = trained(baseline(), 1), scaled = trained(fast, 1);
    for (const auto& p : start->model().params().all()) {
      const Mat moved = valueOf(*base, p->name) - p->value, movedScaled = valueOf(*scaled, p->name) - p->value;
      const bool qk = p->name == "blocks.1.attn.wq.weight" || p->name == "blocks.1.attn.wk.weight";
      if (qk) {
        QVERIFY2((movedScaled - 3 * moved).cwiseAbs().maxCoeff() < 1e-3 * moved.cwiseAbs().maxCoeff(), p->name.c_str());
        QVERIFY(moved.cwiseAbs().maxCoeff() > 0);
      } else {
        QVERIFY2(valueOf(*base, p->name) == valueOf(*scaled, p->name), p->name.c_str());
      }
    }
    // the OV ratio picks W_v and W_o, and a window starting at step 1 leaves step 0 alone
    ExperimentConfig ov = baseline();
    ov.train.ov_lr_ratio = 0;  // frozen
    const auto frozen = trained(ov, 1);
    for (int l = 0; l < 2; ++l)
      for (const char* w : {"wv", "wo"}) {
        const std::string name = "blocks." + std::to_string(l) + ".attn." + w + ".weight";
        QVERIFY(valueOf(*frozen, name) == start->model().params().find(name)->value);
      }
    ExperimentConfig later = fast;
    later.train.lr_ratio_from = 1;
    const auto delayed = trained(later, 1);
    for (const auto& p : base->model().params().all()) QVERIFY(valueOf(*delayed, p->name) == p->value);
  }

  void badSettingsAreRefused_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("negative ratio") << "qk" << "-1" << "train.qk_lr_ratio must be in [0, 100]";
    QTest::newRow("layer list") << "layers" << "1;2" << "train.lr_ratio_layers must list layer indices";
    QTest::newRow("missing layer") << "layers" << "5" << "names layer 5 but the model has 2";
    QTest::newRow("empty window") << "until" << "0.5" << "lr_ratio_until";
  }
  void badSettingsAreRefused() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(QString, message);
    ExperimentConfig e = baseline();
    if (key == "qk") e.train.qk_lr_ratio = value.toDouble();
    if (key == "layers") e.train.lr_ratio_layers = value.toStdString();
    if (key == "until") {
      e.train.lr_ratio_from = 3;
      e.train.lr_ratio_until = 2;
    }
    const std::string why = validate(e);
    QVERIFY2(why.find(message.toStdString()) != std::string::npos, why.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCircuitLr)
#include "test_circuit_lr.moc"
