// Learning a byte-level BPE from a text: the asked vocabulary size, the most frequent pair first,
// deterministic, seconds for 1 MB, the text round-trips and shrinks; the text task's bpe_vocab
// setting trains on those tokens, and a checkpoint saves the tokenizer and checks it on loading.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <random>

#include "data/task.h"
#include "io/checkpoint.h"
#include "io/config_json.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer_files.h"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

// Zipf-like prose: common words, then 5,000 made-up words of 1-4 syllables, numbers, punctuation.
std::string prose(size_t bytes, unsigned seed) {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> w = {"the", "of", "and", "to", "in", "attention", "model", "head", "layer", "token", "is",
                                  "a", "that", "with", "value", "Привет", "中文", "naïve", "it's", "don't", "2024"};
    const std::vector<std::string> syllables = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zen", "qua", "bri",
                                                "dor", "fel", "gu", "hy", "jo", "pra", "ste", "wu", "xi", "ö", "ñа"};
    std::mt19937 made(11);
    while (w.size() < 5000) {
      std::string word;
      for (int n = 1 + made() % 4; n > 0; --n) word += syllables[made() % syllables.size()];
      w.push_back(word);
    }
    return w;
  }();
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < bytes) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    out += words[static_cast<size_t>(std::pow(u, 3.0) * words.size())];
    const unsigned r = rng() % 20;
    out += r == 0 ? ".\n" : r == 1 ? ", " : " ";
  }
  return out;
}

std::unique_ptr<Tokenizer> learned(const std::string& text, int size, TokenizerSpec& spec) {
  const std::string why = learnByteLevelBpe(text, size, spec);
  if (!why.empty()) qWarning("%s", why.c_str());
  spec.source = "test";
  std::string error;
  auto t = makeTokenizer(spec, error);
  if (!t) qWarning("%s", error.c_str());
  return t;
}

ExperimentConfig textConfig(const std::string& path, int bpeVocab) {
  ExperimentConfig c;
  for (const std::string& set : {std::string("task.name=text"), "task.text_path=" + path,
                                 "task.settings.bpe_vocab=" + std::to_string(bpeVocab), std::string("model.d_model=16"),
                                 std::string("model.n_layers=1"), std::string("model.n_heads=2"), std::string("model.context=16"),
                                 std::string("train.batch=2"), std::string("train.steps=4"), std::string("train.threads=1")})
    if (std::string why = applyOverride(c, set); !why.empty()) qFatal("bad override %s: %s", set.c_str(), why.c_str());
  return c;
}

}  // namespace

class TokenizerLearningTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void firstMergeIsTheMostFrequentPair() {
    TokenizerSpec spec;
    // "ab" occurs 4 times, "cd" twice: the first merge is a+b; with 258 tokens the second is c+d.
    const auto t = learned("ab ab ab abcd cd", 258, spec);
    QVERIFY(t);
    QCOMPARE(spec.merges.size(), size_t(2));
    QCOMPARE(spec.merges[0], (std::pair<std::string, std::string>{"a", "b"}));
    QCOMPARE(spec.vocab[256], std::string("ab"));
    std::vector<int> ids;
    QVERIFY(t->encode("abab", ids).empty());
    QCOMPARE(ids, (std::vector<int>{256, 256}));
  }

  void megabyteInSecondsAndRoundTrips() {
    const std::string text = prose(1 << 20, 3);
    TokenizerSpec spec;
    QElapsedTimer timer;
    timer.start();
    const auto t = learned(text, 2000, spec);
    const double seconds = timer.elapsed() / 1000.0;
    QVERIFY(t);
    qInfo("learned 2000 tokens from 1 MiB in %.2f s (a loaded machine: not a benchmark)", seconds);
    QVERIFY2(seconds < 60, "learning took over a minute");
    QCOMPARE(t->vocabSize(), 2000);
    QCOMPARE(static_cast<int>(spec.vocab.size()), 2000);
    std::vector<int> ids;
    QVERIFY(t->encode(text, ids).empty());
    std::string back;
    QVERIFY(t->decode(ids, back).empty());
    QVERIFY(back == text);
    qInfo("%zu bytes became %zu tokens", text.size(), ids.size());
    QVERIFY2(ids.size() * 3 < text.size(), "the learned tokens should compress prose at least 3x");
    std::vector<int> the;
    QVERIFY(t->encode(" attention", the).empty());
    QCOMPARE(the.size(), size_t(1));  // a frequent word is one token

    TokenizerSpec again;
    QVERIFY(learnByteLevelBpe(text, 2000, again).empty());
    QVERIFY(again.merges == spec.merges);  // deterministic
  }

  void badInputIsExplained() {
    TokenizerSpec spec;
    QVERIFY(learnByteLevelBpe("abc", 256, spec).find("more than 256") != std::string::npos);
    QVERIFY(learnByteLevelBpe("a\xFF", 300, spec).find("not valid UTF-8") != std::string::npos);
  }

  void textTaskTrainsOnLearnedTokens() {
    const std::string path = (dir_.path() + "/corpus.txt").toStdString();
    std::ofstream(path, std::ios::binary) << prose(20000, 5);
    TaskConfig config;
    config.name = "text";
    config.text_path = path;
    config.settings["bpe_vocab"] = 300;
    std::string error;
    const auto task = makeTask(config, error);
    QVERIFY2(task, error.c_str());
    QCOMPARE(task->vocabulary().level(), Vocabulary::Level::Subword);
    QCOMPARE(task->vocabulary().size(), 300);
    QVERIFY(task->vocabulary().tokenizer());
    Rng rng(1);
    const Batch batch = task->sample(2, 16, Split::Train, rng);
    for (int id : batch.inputs) QVERIFY(id >= 0 && id < 300);
    const std::string shown = task->vocabulary().decode({batch.inputs.begin(), batch.inputs.begin() + 16});
    QVERIFY2(prose(20000, 5).find(shown) != std::string::npos, shown.c_str());

    config.settings["bpe_vocab"] = 100;
    QVERIFY(!makeTask(config, error) && error.find("more than 256") != std::string::npos);
  }

  void checkpointSavesAndChecksTheTokenizer() {
    const std::string path = (dir_.path() + "/train.txt").toStdString();
    std::ofstream(path, std::ios::binary) << prose(20000, 7);
    Trainer trainer(textConfig(path, 320));
    trainer.trainStep();
    const std::string folder = (dir_.path() + "/run").toStdString();
    QCOMPARE(QString::fromStdString(saveCheckpoint(folder, trainer)), QString());
    QVERIFY(fs::exists(folder + "/tokenizer.json"));

    std::string error;
    const auto saved = loadTokenizer(folder, error);  // what `attnlab-cli tokenize --model RUN` reads
    QVERIFY2(saved, error.c_str());
    std::vector<int> a, b;
    QVERIFY(saved->encode("the attention head", a).empty());
    QVERIFY(trainer.task().vocabulary().encode("the attention head", b, error));
    QCOMPARE(a, b);

    LoadedCheckpoint loaded;
    QCOMPARE(QString::fromStdString(loadCheckpoint(folder, loaded)), QString());
    std::ofstream(folder + "/corpus.txt", std::ios::binary) << prose(20000, 8);  // its copy of the text changes
    const std::string why = loadCheckpoint(folder, loaded);
    QVERIFY2(why.find("tokenizer.json: differs") != std::string::npos, why.c_str());
  }
};

QTEST_MAIN(TokenizerLearningTest)
#include "test_tokenizer_learning.moc"
