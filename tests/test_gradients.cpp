// Finite-difference checks of every parameter tensor for softmax attention with each registered
// positional encoding, and for the block options (attention-only, untied head, grouped KV).
#include <QtTest>

#include <omp.h>

#include "grad_check.h"
#include "model/model.h"
#include "positional/positional.h"

using namespace attnlab;

class TestGradients : public QObject {
  Q_OBJECT

  static ModelConfig small() { return testing::gradCheckConfig("softmax", "learned"); }
  static void run(const ModelConfig& c, const std::string& label) {
    Model model(c, 7);
    testing::randomiseParams(model, 11);
    testing::checkGradients(model, testing::randomCase(c, 2, 6, 3), label);
  }

 private slots:
  // One thread: these cases are tiny, and OpenMP's spinning threads slow them down by orders of
  // magnitude when other jobs share the cores.
  void initTestCase() {
    omp_set_num_threads(1);
    Eigen::setNbThreads(1);
  }

  // Every registered encoding, so a new one is checked the moment it registers.
  void softmaxWithEachPositionalEncoding_data() {
    QTest::addColumn<QString>("positional");
    const auto& encodings = PositionalRegistry::instance().entries();
    QVERIFY(!encodings.empty());
    for (const auto& e : encodings) QTest::newRow(e.name.c_str()) << QString::fromStdString(e.name);
  }
  void softmaxWithEachPositionalEncoding() {
    QFETCH(QString, positional);
    ModelConfig c = small();
    c.positional = positional.toStdString();
    // Learned angles (accumulated rotation) start at RoPE's frequencies theta^(-2m/d_h): at the
    // default base 10000 the slow pairs turn too little for float32 differences to see their
    // increments' gradients, so such encodings are checked at base 100, as their own suite does.
    if (PositionalRegistry::instance().create(c.positional)->rotaryAnglesNeedGradient()) c.positional_settings["theta"] = 100;
    run(c, "softmax+" + c.positional);
  }
  void partialRope() {
    ModelConfig c = small();
    c.d_model = 16;  // d_head 8: 4 pairs, half of them rotate
    c.positional = "rope";
    c.positional_settings["rotary_fraction"] = 0.5;
    c.positional_settings["theta"] = 100;
    run(c, "softmax+rope(fraction 0.5)");
  }
  void temperature() {
    ModelConfig c = small();
    c.attention_settings["temperature"] = 2.5;
    run(c, "softmax(beta 2.5)");
  }
  void attentionOnlyUntied() {
    ModelConfig c = small();
    c.attention_only = true;
    c.tied_embeddings = false;
    c.positional = "rope";
    run(c, "attention-only untied");
  }
  void groupedKeyValueHeads() {
    ModelConfig c = small();
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.positional = "alibi";
    run(c, "softmax GQA-2");
  }
};

QTEST_APPLESS_MAIN(TestGradients)
#include "test_gradients.moc"
