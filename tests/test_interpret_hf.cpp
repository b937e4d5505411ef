// The causal analyses' exact contracts (tests/interpret_contracts.h) on the lab's own models and on
// a tiny random model of each real architecture opened from a Hugging Face folder: GPT-2 (learned
// positions, biases everywhere), Llama (RMSNorm, SwiGLU, GQA, llama3 RoPE scaling), Qwen2 (q/k/v
// biases), GPT-NeoX with parallel and with sequential residual (partial rotary, output biases).
// The folders are written by tests/hf/hf_reference.py --write-tiny (the reference test's models).
#include <QtTest>

#include <cstdlib>
#include <filesystem>

#include "hf/hf_model.h"
#include "interpret/input_attribution.h"
#include "interpret_contracts.h"
#include "model_support.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

const std::vector<int> kClean = {3, 17, 5, 0, 29, 11, 11, 2};
const std::vector<int> kCorrupt = {3, 17, 5, 0, 29, 23, 11, 2};
const std::filesystem::path kFolders = std::filesystem::path(ATTNLAB_BUILD_DIR) / "tests" / "interpret_hf";

std::unique_ptr<Model> openFolder(const std::string& name) {
  std::unique_ptr<Model> model;
  hf::HfModelInfo info;
  const std::string why = hf::openHfModel((kFolders / name).string(), model, info);
  if (!why.empty()) qWarning("%s", why.c_str());
  return model;
}

std::unique_ptr<Model> labModel(const std::string& positional, bool attentionOnly) {
  ModelConfig c = smallConfig("softmax", positional, 32);
  c.n_kv_heads = 2;
  c.attention_only = attentionOnly;
  return randomisedModel(c);
}

bool rotary(const Model& model) { return model.attentionLayer(0).positional().rotaryPairs() > 0; }

}  // namespace

class TestInterpretHf : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const std::string command = std::string(ATTNLAB_SOURCE_DIR) + "/scripts/install_python_peers.sh && /usr/bin/python3 " +
                                ATTNLAB_SOURCE_DIR + "/tests/hf/hf_reference.py --write-tiny " + kFolders.string();
    QCOMPARE(std::system(command.c_str()), 0);
  }

  void contracts_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"lab rope", "lab learned attention-only", "gpt2", "llama", "qwen2", "neox_parallel", "neox_sequential"})
      QTest::newRow(name) << QString(name);
  }

  void contracts() {
    QFETCH(QString, name);
    std::unique_ptr<Model> model = name == "lab rope" ? labModel("rope", false)
                                   : name.startsWith("lab") ? labModel("learned", true)
                                                            : openFolder(name.toStdString());
    QVERIFY(model);
    if (name.startsWith("neox")) QCOMPARE(model->config().parallel_residual, name == "neox_parallel");
    std::string why = patchingContracts(*model, kClean, kCorrupt);
    QVERIFY2(why.empty(), why.c_str());
    why = lensContract(*model, kClean);
    QVERIFY2(why.empty(), why.c_str());
    why = dlaContract(*model, kClean);
    QVERIFY2(why.empty(), why.c_str());
    why = zeroKnockoutContract(*model, kClean, rotary(*model));
    QVERIFY2(why.empty(), why.c_str());
    const InputAttribution a = inputAttribution(*model, kClean);
    QCOMPARE(a.grad_x_input.size(), kClean.size());
    why = compositionKernelContract(*model);  // last: edits the weights
    QVERIFY2(why.empty(), why.c_str());
  }

  // The terms name each bias the architecture has, and only those.
  void dlaTermsFollowTheArchitecture() {
    auto count = [](const DirectLogitAttribution& d, const char* part) {
      return std::count_if(d.terms.begin(), d.terms.end(), [&](const DlaTerm& t) { return t.name.find(part) != std::string::npos; });
    };
    const DirectLogitAttribution neox = directLogitAttribution(*openFolder("neox_parallel"), kClean);
    QCOMPARE(count(neox, "attn"), 2L);  // attention output biases
    QCOMPARE(count(neox, "mlp"), 4L);   // mlp l, mlp l bias
    QCOMPARE(count(neox, "ln_f bias"), 1L);
    const DirectLogitAttribution llama = directLogitAttribution(*openFolder("llama"), kClean);
    QCOMPARE(count(llama, "bias"), 0L);  // RMSNorm, bias-free projections
    QCOMPARE(count(llama, "mlp"), 2L);
    QCOMPARE(llama.terms.size(), size_t(1 + 2 * 4 + 2));
  }
};

QTEST_APPLESS_MAIN(TestInterpretHf)
#include "test_interpret_hf.moc"
