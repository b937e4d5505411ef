// Retrieval heads on Hugging Face folders: passkey prompts written with the folder's own tokenizer
// (tests/hf_support.h's tiny folders, context raised to fit a prompt) are well formed (every prompt
// as long as asked, the targets only on the answer, the answer's tokens those of the needle's key,
// the needle at increasing depths, the same prompts for the same seed), and the retrieval study runs
// on them with k = 0 knockouts changing nothing bit for bit. Tiny random models retrieve nothing:
// this checks the machinery, not a finding.
#include <QtTest>

#include <regex>

#include "hf/hf_vocabulary.h"
#include "hf_support.h"
#include "interpret/passkey_prompts.h"
#include "interpret/retrieval_heads.h"
#include "tokenizer/tokenizer.h"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

constexpr int kContext = 128, kLength = 100;

struct Opened {
  std::unique_ptr<Model> model;
  Vocabulary vocabulary;
};

// The architecture's config with its 40 positions raised to kContext.
TinyArchitecture withLongerContext(const TinyArchitecture& arch, std::string& config) {
  config = std::regex_replace(std::string(arch.config), std::regex(R"re((n_positions|max_position_embeddings)": 40)re"),
                              "$1\": " + std::to_string(kContext));
  TinyArchitecture longer = arch;
  longer.config = config.c_str();
  return longer;
}

// Logits of every prompt of `batch` with `hooks` set.
Mat batchLogits(const Model& model, const Batch& batch, ForwardHooks* hooks) {
  auto ws = makeWorkspace();
  ws->hooks = hooks;
  model.forward(*ws, batch.inputs.data(), batch.targets.data(), batch.B, batch.T);
  return workspaceLogits(*ws);
}

std::string decode(const Tokenizer& tokenizer, const int* ids, int n) {
  std::string text;
  const std::string why = tokenizer.decode(std::vector<int>(ids, ids + n), text);
  return why.empty() ? text : "(" + why + ")";
}

}  // namespace

class TestInterpretPasskey : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  std::map<QString, Opened> opened_;

  const Opened& open(const QString& name) { return opened_.at(name); }

 private slots:
  void initTestCase() {
    for (const TinyArchitecture& arch : tinyArchitectures()) {
      const QString name(arch.label);
      if (name != "gpt2" && name != "llama" && name != "qwen2" && name != "gpt_neox") continue;
      std::string config;
      const fs::path dir = fs::path(tmp_.path().toStdString()) / arch.label;
      QCOMPARE(QString::fromStdString(writeTinyFolder(withLongerContext(arch, config), dir)), QString());
      Opened o;
      hf::HfModelInfo info;
      QCOMPARE(QString::fromStdString(hf::openHfModel(dir.string(), o.model, info)), QString());
      QCOMPARE(o.model->config().context, kContext);
      std::string problem;
      o.vocabulary = hf::hfVocabulary(dir.string(), info.config.vocab, problem);
      QVERIFY2(problem.empty(), problem.c_str());
      opened_[name] = std::move(o);
    }
    QCOMPARE(opened_.size(), size_t(4));
  }

  void architectures_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"gpt2", "llama", "qwen2", "gpt_neox"}) QTest::newRow(name) << QString(name);
  }

  void promptsAreWellFormed_data() { architectures_data(); }
  void promptsAreWellFormed() {
    QFETCH(QString, name);
    const Opened& o = open(name);
    const Tokenizer& tok = *o.vocabulary.tokenizer();
    PasskeyPromptOptions options{kLength, 2, 3, 5};
    const std::vector<Batch> batches = passkeyPrompts(tok, o.model->config().vocab, kContext, options);
    QCOMPARE(batches.size(), size_t(2));
    const std::regex shape(R"(^(.*)The pass key is (\d{5})\. Remember it\.(.*) What is the pass key\? The pass key is (\d{5})$)");
    size_t lastNeedle = 0;
    std::set<std::string> keys;
    for (const Batch& batch : batches) {
      QCOMPARE(batch.B, 3);
      QCOMPARE(batch.T, kLength);
      QCOMPARE(batch.inputs.size(), size_t(3 * kLength));
      QCOMPARE(batch.targets.size(), size_t(3 * kLength));
      for (int b = 0; b < batch.B; ++b) {
        const int* in = batch.inputs.data() + b * kLength;
        const int* target = batch.targets.data() + b * kLength;
        const int firstAnswer = static_cast<int>(std::find_if(target, target + kLength, [](int t) { return t >= 0; }) - target);
        const int keyTokens = kLength - firstAnswer;
        QVERIFY(keyTokens >= 1);
        // Teacher forcing: each target is the next input, and every position after the first answer is one.
        for (int t = firstAnswer; t < kLength; ++t) {
          QVERIFY(target[t] >= 0);
          if (t + 1 < kLength) QCOMPARE(target[t], in[t + 1]);
        }
        // The full text (the inputs and the last target) reads as a passkey prompt; the answer is the key.
        std::vector<int> full(in, in + kLength);
        full.push_back(target[kLength - 1]);
        std::smatch m;
        const std::string text = decode(tok, full.data(), kLength + 1);
        QVERIFY2(std::regex_match(text, m, shape), text.c_str());
        QCOMPARE(m[2].str(), m[4].str());
        QCOMPARE(decode(tok, target + firstAnswer, keyTokens), " " + m[4].str());
        keys.insert(m[4].str());
        // The answer's tokens appear, in order, earlier in the prompt: the needle's key.
        const int* needle = std::search(in, in + firstAnswer - keyTokens, target + firstAnswer, target + kLength);
        QVERIFY(needle < in + firstAnswer - keyTokens);
        // The needle moves deeper from prompt to prompt.
        QVERIFY(static_cast<size_t>(m[1].length()) >= lastNeedle);
        lastNeedle = m[1].length();
      }
    }
    QVERIFY(keys.size() >= 5);  // random keys
    QVERIFY(lastNeedle > 0);
    // Seeded: the same seed gives the same prompts, another seed other keys.
    const std::vector<Batch> again = passkeyPrompts(tok, o.model->config().vocab, kContext, options);
    for (size_t i = 0; i < batches.size(); ++i) QVERIFY(again[i].inputs == batches[i].inputs && again[i].targets == batches[i].targets);
    options.seed = 6;
    QVERIFY(passkeyPrompts(tok, o.model->config().vocab, kContext, options)[0].inputs != batches[0].inputs);
  }

  void badLengthsAreRefused() {
    const Opened& o = open("gpt2");
    const Tokenizer& tok = *o.vocabulary.tokenizer();
    const int vocab = o.model->config().vocab;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, passkeyPrompts(tok, vocab, kContext, {kContext + 1, 1, 1, 1}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, passkeyPrompts(tok, vocab, kContext, {20, 1, 1, 1}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, passkeyPrompts(tok, 100, kContext, {kLength, 1, 1, 1}));  // ids beyond 100 rows
  }

  // The study runs; with k = 0 the knockouts leave every logit bit for bit as it was.
  void retrievalStudyRuns_data() { architectures_data(); }
  void retrievalStudyRuns() {
    QFETCH(QString, name);
    const Opened& o = open(name);
    const Model& model = *o.model;
    const std::vector<Batch> prompts = passkeyPrompts(*o.vocabulary.tokenizer(), model.config().vocab, kContext, {kLength, 1, 2, 3});
    const Mat plain = batchLogits(model, prompts[0], nullptr);
    EditHook none = headKnockout({});
    QVERIFY((batchLogits(model, prompts[0], &none).array() == plain.array()).all());
    const bool rotary = model.attentionLayer(0).positional().rotaryPairs() > 0;
    QCOMPARE(rotary, name != "gpt2");
    if (rotary) {
      EditHook noPairs = ropePairKnockout(model, {{0, 0}, {1, 1}}, 0);
      QVERIFY((batchLogits(model, prompts[0], &noPairs).array() == plain.array()).all());
    }
    const RetrievalStudy zero = retrievalStudy(model, prompts, 0, 1);
    QVERIFY(zero.top.empty());
    QCOMPARE(zero.accuracy_top_masked, zero.accuracy);
    QCOMPARE(zero.accuracy_random_masked, zero.accuracy);
    const RetrievalStudy two = retrievalStudy(model, prompts, 2, 1);
    QCOMPARE(two.scores.size(), size_t(model.config().n_layers));
    for (const auto& layer : two.scores)
      for (double s : layer) QVERIFY(s >= 0 && s <= 1);
    QCOMPARE(two.top.size(), size_t(2));
    QCOMPARE(two.accuracy, zero.accuracy);
    QCOMPARE(std::isnan(two.accuracy_rope_knockout), !rotary);
    QCOMPARE(std::isnan(two.accuracy_phase_off), !rotary);
  }
};

QTEST_APPLESS_MAIN(TestInterpretPasskey)
#include "test_interpret_passkey.moc"
