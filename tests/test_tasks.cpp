// The data layer: every registered task builds well-formed batches, each task's answers follow
// its rule (checked by hand-written readers, independent of the generators), sampling is
// deterministic with train and validation apart, the toy language obeys its grammar, the text
// task splits a file 90/10 and rejects bad files, and bad settings are explained.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "data/corpus_stats.h"
#include "data/task.h"
#include "data/toy_language.h"

using namespace attnlab;

namespace {

std::unique_ptr<Task> makeOrFail(const std::string& name, const Settings& settings = {}, const std::string& path = {}) {
  TaskConfig config;
  config.name = name;
  config.settings = settings;
  config.text_path = path;
  std::string error;
  auto task = makeTask(config, error);
  if (!task) qWarning("%s", error.c_str());
  return task;
}

std::string makeError(const std::string& name, const Settings& settings = {}, const std::string& path = {}) {
  TaskConfig config;
  config.name = name;
  config.settings = settings;
  config.text_path = path;
  std::string error;
  auto task = makeTask(config, error);
  return task ? std::string("(no error)") : error;
}

void writeFile(const QString& path, const std::string& bytes) {
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << bytes;
}

// The full sequence s[0..T] of a row, as words: its inputs, then the last target.
std::vector<std::string> words(const Task& task, const Batch& b, int row) {
  std::vector<std::string> out;
  for (int t = 0; t < b.T; ++t) out.push_back(task.vocabulary().token(b.inputs[row * b.T + t]));
  out.push_back(task.vocabulary().token(b.targets[row * b.T + b.T - 1]));
  return out;
}

// Positions t (0-based, into targets) that carry a target in a row.
std::vector<int> answerPositions(const Batch& b, int row) {
  std::vector<int> out;
  for (int t = 0; t < b.T; ++t)
    if (b.targets[row * b.T + t] >= 0) out.push_back(t);
  return out;
}

int countLeading(const std::vector<std::string>& s, const std::string& token) {
  int n = 0;
  while (n < static_cast<int>(s.size()) && s[n] == token) ++n;
  return n;
}

// Checks toy_language text against the grammar documented in toy_language.cpp.
class GrammarChecker {
 public:
  int agreements = 0, subjectRelatives = 0, objectRelatives = 0, coordinations = 0, sentences = 0;

  // "" when every complete sentence (up to the last '.') parses and agrees, else why and where.
  std::string check(std::vector<std::string> text) {
    const auto lastPeriod = std::find(text.rbegin(), text.rend(), lexicon_.period);
    text.erase(lastPeriod.base(), text.end());
    words_ = std::move(text);
    pos_ = 0;
    error_.clear();
    while (pos_ < words_.size() && sentence()) ++sentences;
    return error_;
  }

 private:
  const ToyLexicon& lexicon_ = toyLexicon();

  template <class List>
  static bool contains(const List& list, const std::string& w) {
    return std::find(list.begin(), list.end(), w) != list.end();
  }
  // 0 singular, 1 plural, -1 neither form of any word in `forms`.
  static int numberIn(const std::vector<WordForms>& forms, const std::string& w) {
    for (const auto& f : forms) {
      if (f.singular == w) return 0;
      if (f.plural == w) return 1;
    }
    return -1;
  }
  std::string peek() const { return pos_ < words_.size() ? words_[pos_] : std::string(); }
  bool fail(const std::string& why) {
    error_ = why + " at word " + std::to_string(pos_) + " ('" + peek() + "')";
    return false;
  }
  bool agree(int verbNumber, bool subjectPlural) {
    if (verbNumber != static_cast<int>(subjectPlural)) return fail("verb disagrees with its subject");
    ++agreements;
    return true;
  }

  bool sentence() {
    bool plural = false;
    if (!subject(plural) || !verbPhrase(plural)) return false;
    if (contains(lexicon_.prepositions, peek())) {
      ++pos_;
      if (peek() != lexicon_.article) return fail("expected 'the' after a preposition");
      ++pos_;
      if (!contains(lexicon_.places, peek())) return fail("expected a place");
      ++pos_;
    }
    if (peek() != lexicon_.period) return fail("expected '.'");
    ++pos_;
    return true;
  }
  bool subject(bool& plural) {
    if (contains(lexicon_.names, peek())) {
      ++pos_;
      plural = false;
      if (peek() != lexicon_.conjunction) return true;
      ++pos_;
      if (!contains(lexicon_.names, peek())) return fail("expected a name after 'and'");
      ++pos_;
      plural = true;
      ++coordinations;
      return true;
    }
    if (!nounPhrase(plural)) return false;
    return peek() == lexicon_.relativePronoun ? relative(plural) : true;
  }
  bool nounPhrase(bool& plural) {
    const std::string det = peek();
    const bool singularOnly = contains(lexicon_.singularDeterminers, det);
    const bool pluralOnly = contains(lexicon_.pluralDeterminers, det);
    if (!singularOnly && !pluralOnly && det != lexicon_.article) return fail("expected a determiner");
    ++pos_;
    if (contains(lexicon_.adjectives, peek())) ++pos_;
    const int number = numberIn(lexicon_.nouns, peek());
    if (number < 0) return fail("expected a noun");
    if ((singularOnly && number == 1) || (pluralOnly && number == 0)) return fail("determiner disagrees with its noun");
    plural = number == 1;
    ++pos_;
    return true;
  }
  bool relative(bool headPlural) {
    ++pos_;  // "that"
    if (numberIn(lexicon_.transitiveVerbs, peek()) >= 0 || numberIn(lexicon_.intransitiveVerbs, peek()) >= 0) {
      ++subjectRelatives;
      return verbPhrase(headPlural);
    }
    ++objectRelatives;
    bool innerPlural = false;
    if (!subject(innerPlural)) return false;
    const int number = numberIn(lexicon_.transitiveVerbs, peek());
    if (number < 0) return fail("expected a transitive verb closing an object relative clause");
    if (!agree(number, innerPlural)) return false;
    ++pos_;
    return true;
  }
  bool verbPhrase(bool plural) {
    const int transitive = numberIn(lexicon_.transitiveVerbs, peek());
    const int intransitive = numberIn(lexicon_.intransitiveVerbs, peek());
    if (transitive < 0 && intransitive < 0) return fail("expected a verb");
    if (!agree(std::max(transitive, intransitive), plural)) return false;
    ++pos_;
    if (transitive >= 0) return object();
    if (contains(lexicon_.adverbs, peek())) ++pos_;
    return true;
  }
  bool object() {
    if (contains(lexicon_.names, peek())) {
      ++pos_;
      return true;
    }
    bool plural = false;
    if (!nounPhrase(plural)) return false;
    return peek() == lexicon_.relativePronoun ? relative(plural) : true;
  }

  std::vector<std::string> words_;
  size_t pos_ = 0;
  std::string error_;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  out.push_back(".");  // check() drops words after the last '.', so a final one keeps them
  return out;
}

}  // namespace

class TestTasks : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  QString textPath_, dataPath_;

  std::unique_ptr<Task> makeAny(const std::string& name) {
    return makeOrFail(name, {}, (name == "token_files" ? dataPath_ : textPath_).toStdString());
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    // 900 characters of "abcde", then 100 of "xyé": the split point is visible in the tokens.
    std::string text;
    for (int i = 0; i < 900; ++i) text += static_cast<char>('a' + i % 5);
    const char* tail[] = {"x", "y", "\xC3\xA9"};
    for (int i = 0; i < 100; ++i) text += tail[i % 3];
    textPath_ = dir_.filePath("corpus.txt");
    writeFile(textPath_, text);
    // a data folder (attnlab-cli data's format) for token_files: 40 + 40 sequences of 32 ids in [0, 6), each target the next token
    dataPath_ = dir_.filePath("data");
    QDir().mkpath(dataPath_);
    writeFile(dataPath_ + "/data.json",
              R"({"format": "attnlab-data-1", "vocab": 6, "seq_len": 32, "splits": {"train": 40, "validation": 40}, "has_answers": false})");
    for (const char* split : {"train", "validation"}) {
      std::string tokens, targets;
      const auto token = [&](int row, int t) { return (t * (row % 5 + 1) + (split[0] == 't' ? 0 : 3) + row) % 6; };
      for (int row = 0; row < 40; ++row)
        for (int t = 0; t < 32; ++t) {  // a language model's data: the target is the next token
          const int input = token(row, t), target = token(row, t + 1);
          tokens.append(reinterpret_cast<const char*>(&input), 4), targets.append(reinterpret_cast<const char*>(&target), 4);
        }
      writeFile(dataPath_ + "/" + split + ".tokens", tokens);
      writeFile(dataPath_ + "/" + split + ".targets", targets);
    }
  }

  void everyTaskBuildsWellFormedBatches() {
    const auto& entries = TaskRegistry::instance().entries();
    QVERIFY(entries.size() >= 10);
    for (const auto& entry : entries) {
      const QByteArray name = QByteArray::fromStdString(entry.name);
      QVERIFY2(!entry.summary.empty(), name);
      auto task = makeAny(entry.name);
      QVERIFY2(task, name);
      const int vocab = task->vocabulary().size();
      QVERIFY2(vocab >= 2, name);
      const int natural = task->sequenceLength(128);
      QVERIFY2(natural >= task->minSequenceLength() && natural <= 128, name);
      QCOMPARE(task->sequenceLength(task->minSequenceLength()), task->minSequenceLength());
      std::vector<int> lengths = {natural, task->minSequenceLength()};
      if (entry.name != "text" && entry.name != "token_files") lengths.push_back(4 * natural + 1);  // files hold what they hold  // generated tasks stretch (extrapolation)
      Rng rng(3);
      for (const int T : lengths)
        for (const Split split : {Split::Train, Split::Validation}) {
          const Batch b = task->sample(5, T, split, rng);
          QCOMPARE(b.B, 5);
          QCOMPARE(b.T, T);
          QCOMPARE(static_cast<int>(b.inputs.size()), 5 * T);
          QCOMPARE(static_cast<int>(b.targets.size()), 5 * T);
          for (int row = 0; row < 5; ++row) {
            QVERIFY2(!answerPositions(b, row).empty(), name);
            for (int t = 0; t < T; ++t) {
              const int input = b.inputs[row * T + t], target = b.targets[row * T + t];
              QVERIFY2(input >= 0 && input < vocab, name);
              QVERIFY2(target >= -1 && target < vocab, name);
              // A target is the next token; language models are asked about every one.
              if (t + 1 < T && target >= 0) QVERIFY2(target == b.inputs[row * T + t + 1], name);
              if (!task->hasAnswers()) QVERIFY2(target >= 0, name);
            }
          }
        }
      QCOMPARE(static_cast<int>(task->probe(natural, rng).size()), natural);
    }
  }

  void naturalLengthsFollowSettings() {
    QCOMPARE(makeOrFail("copy", {{"length", 10}})->sequenceLength(128), 20);
    QCOMPARE(makeOrFail("associative_recall", {{"pairs", 5}})->sequenceLength(128), 12);
    QCOMPARE(makeOrFail("associative_recall", {{"pairs", 50}, {"symbols", 52}})->sequenceLength(64), 64);
    QCOMPARE(makeOrFail("modular_addition", {{"problems", 3}})->sequenceLength(128), 16);
    QCOMPARE(makeOrFail("passkey", {{"length", 64}, {"length_multiplier", 4}})->sequenceLength(1024), 256);
    QCOMPARE(makeOrFail("passkey", {{"length", 64}, {"length_multiplier", 4}})->sequenceLength(128), 128);
    QCOMPARE(makeOrFail("toy_language")->sequenceLength(77), 77);
  }

  void listTasksAnswerTheTransformedList() {
    for (const std::string name : {"copy", "reverse", "sorting"}) {
      auto task = makeOrFail(name, {{"symbols", 12}});
      QVERIFY(task);
      Rng rng(5);
      for (const int T : {32, 33}) {
        const Batch b = task->sample(8, T, Split::Train, rng);
        for (int row = 0; row < b.B; ++row) {
          const auto s = words(*task, b, row);
          const int arrow = static_cast<int>(std::find(s.begin(), s.end(), ">") - s.begin());
          const int pads = countLeading(s, "_");
          QCOMPARE(pads, T % 2);
          QCOMPARE(arrow, pads + T / 2);
          std::vector<std::string> items(s.begin() + pads, s.begin() + arrow), answer(s.begin() + arrow + 1, s.end());
          if (name == "reverse") std::reverse(items.begin(), items.end());
          if (name == "sorting")
            std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return std::stoi(a) < std::stoi(b); });
          QVERIFY2(items == answer, name.c_str());
          std::vector<int> expected;
          for (int t = arrow; t < T; ++t) expected.push_back(t);
          QVERIFY(answerPositions(b, row) == expected);
        }
      }
    }
  }

  void inductionRepeatsTheFirstHalf() {
    auto task = makeOrFail("induction", {{"symbols", 32}, {"length", 32}});
    QCOMPARE(task->sequenceLength(128), 63);
    Rng rng(6);
    for (const int T : {63, 64, 200}) {
      const Batch b = task->sample(6, T, Split::Train, rng);
      for (int row = 0; row < b.B; ++row) {
        const auto s = words(*task, b, row);
        const int pads = countLeading(s, "_");
        const int half = (T + 1 - pads) / 2;
        QCOMPARE(pads + 2 * half, T + 1);
        const std::vector<std::string> first(s.begin() + pads, s.begin() + pads + half);
        QVERIFY(std::vector<std::string>(s.begin() + pads + half, s.end()) == first);
        // The first 32 tokens are a shuffled deck: no symbol recurs there.
        const std::set<std::string> firstDeck(first.begin(), first.begin() + std::min(half, 32));
        QCOMPARE(static_cast<int>(firstDeck.size()), std::min(half, 32));
        std::vector<int> expected;  // targets of repeat tokens 2..n sit one position earlier
        for (int t = pads + half; t < T; ++t) expected.push_back(t);
        QVERIFY(answerPositions(b, row) == expected);
      }
    }
  }

  void recallAnswersTheQueriedValue() {
    auto task = makeOrFail("associative_recall", {{"pairs", 6}, {"symbols", 8}});
    Rng rng(7);
    for (const int T : {14, 15, 40}) {
      const Batch b = task->sample(20, T, Split::Validation, rng);
      for (int row = 0; row < b.B; ++row) {
        const auto s = words(*task, b, row);
        const int pads = countLeading(s, "_");
        QCOMPARE(s[T - 2], std::string("?"));
        std::map<std::string, std::string> pairs;
        for (int i = pads; i < T - 2; i += 2) QVERIFY(pairs.emplace(s[i], s[i + 1]).second);  // distinct keys
        QCOMPARE(static_cast<int>(pairs.size()), std::min(8, (T - 2) / 2));
        QVERIFY(pairs.count(s[T - 1]));
        QCOMPARE(s[T], pairs[s[T - 1]]);
        QVERIFY(answerPositions(b, row) == std::vector<int>{T - 1});
      }
    }
  }

  void recallWithSeveralQueriesAnswersEach() {
    auto task = makeOrFail("associative_recall", {{"pairs", 6}, {"symbols", 8}, {"queries", 3}});
    QCOMPARE(task->sequenceLength(128), 2 * 6 + 3 * 3 - 1);
    Rng rng(9);
    const int T = task->sequenceLength(128);
    const Batch b = task->sample(10, T, Split::Train, rng);
    for (int row = 0; row < b.B; ++row) {
      const auto s = words(*task, b, row);
      std::map<std::string, std::string> pairs;
      for (int i = 0; i < 12; i += 2) QVERIFY(pairs.emplace(s[i], s[i + 1]).second);
      std::vector<int> expected;
      for (int q = 0; q < 3; ++q) {
        const int at = 12 + 3 * q;  // '?' then the key, then its value
        QCOMPARE(s[at], std::string("?"));
        QCOMPARE(s[at + 2], pairs[s[at + 1]]);
        expected.push_back(at + 1);
      }
      QVERIFY(answerPositions(b, row) == expected);
    }
  }

  void modularAdditionIsCorrectModP() {
    auto task = makeOrFail("modular_addition", {{"modulus", 7}, {"problems", 4}});
    QCOMPARE(task->sequenceLength(128), 22);
    QCOMPARE(task->vocabulary().size(), 7 + 4);
    Rng rng(8);
    const Batch b = task->sample(10, 25, Split::Train, rng);
    for (int row = 0; row < b.B; ++row) {
      const auto s = words(*task, b, row);
      const int pads = countLeading(s, "_");
      QCOMPARE(pads, 26 - (4 * 5 + 3));  // 4 problems of 5 tokens + 3 ';' fill 23 of 26
      std::vector<int> expected;
      for (int i = pads, k = 0; i < 26; i += 6, ++k) {
        QCOMPARE(s[i + 1], std::string("+"));
        QCOMPARE(s[i + 3], std::string("="));
        QCOMPARE(std::stoi(s[i + 4]), (std::stoi(s[i]) + std::stoi(s[i + 2])) % 7);
        if (i + 5 < 26) QCOMPARE(s[i + 5], std::string(";"));
        expected.push_back(i + 3);
      }
      QVERIFY(answerPositions(b, row) == expected);
    }
  }

  void modularAdditionValidatesOnHeldOutPairs() {
    auto task = makeOrFail("modular_addition", {{"modulus", 11}, {"train_fraction", 0.5}});
    const auto pairsOf = [&](Split split) {
      std::set<std::pair<int, int>> pairs;
      Rng rng(9);
      const Batch b = task->sample(2000, 4, split, rng);
      for (int row = 0; row < b.B; ++row) pairs.insert({b.inputs[row * 4], b.inputs[row * 4 + 2]});
      return pairs;
    };
    const auto train = pairsOf(Split::Train), validation = pairsOf(Split::Validation);
    QCOMPARE(static_cast<int>(train.size() + validation.size()), 121);  // all seen, each on one side
    for (const auto& p : validation) QVERIFY(!train.count(p));
    QVERIFY(std::abs(static_cast<int>(train.size()) - 60) <= 1);
  }

  void dyckIsBalancedAndAnswersClosers() {
    auto task = makeOrFail("dyck", {{"kinds", 3}, {"max_depth", 5}});
    QCOMPARE(task->vocabulary().size(), 7);
    Rng rng(10);
    long closers = 0;
    for (const int T : {63, 64, 1}) {
      const Batch b = task->sample(10, T, Split::Train, rng);
      for (int row = 0; row < b.B; ++row) {
        const auto s = words(*task, b, row);
        const int pads = countLeading(s, "_");
        QCOMPARE(pads, (T + 1) % 2);
        std::string open;
        std::vector<int> expected;
        for (int i = pads; i <= T; ++i) {
          const auto at = std::string("([{").find(s[i]);
          if (at != std::string::npos) {
            open += s[i];
            QVERIFY(static_cast<int>(open.size()) <= 5);
            continue;
          }
          QVERIFY2(!open.empty(), "a bracket closes with none open");
          const std::string pairOf = std::string(1, open.back()) + s[i];
          QVERIFY2(pairOf == "()" || pairOf == "[]" || pairOf == "{}", pairOf.c_str());
          open.pop_back();
          expected.push_back(i - 1);
          ++closers;
        }
        QVERIFY(open.empty());
        QVERIFY(answerPositions(b, row) == expected);
      }
    }
    QVERIFY(closers > 500);
  }

  void passkeyAsksForTheHiddenDigits() {
    auto task = makeOrFail("passkey", {{"digits", 4}});
    QCOMPARE(task->minSequenceLength(), 18);
    Rng rng(11);
    std::set<int> hidingPlaces;
    for (const int T : {18, 64, 300}) {
      const Batch b = task->sample(10, T, Split::Train, rng);
      for (int row = 0; row < b.B; ++row) {
        const auto s = words(*task, b, row);
        const std::vector<std::string> statement = {"the", "pass", "key", "is"};
        const auto at = std::search(s.begin(), s.end(), statement.begin(), statement.end());
        QVERIFY(at != s.end());
        hidingPlaces.insert(static_cast<int>(at - s.begin()));
        const std::vector<std::string> hidden(at + 4, at + 8);
        QCOMPARE(*(at + 8), std::string("."));
        const std::vector<std::string> question = {"what", "is", "the", "pass", "key", "?"};
        QVERIFY(std::equal(question.begin(), question.end(), s.end() - 10));
        QVERIFY(std::vector<std::string>(s.end() - 4, s.end()) == hidden);
        for (const auto& d : hidden) QVERIFY(d.size() == 1 && std::isdigit(static_cast<unsigned char>(d[0])));
        QVERIFY(answerPositions(b, row) == (std::vector<int>{T - 4, T - 3, T - 2, T - 1}));
      }
    }
    QVERIFY(hidingPlaces.size() > 10);  // the statement moves around
  }

  void samplingIsDeterministicAndSplitsDiffer() {
    for (const auto& entry : TaskRegistry::instance().entries()) {
      const QByteArray name = QByteArray::fromStdString(entry.name);
      auto task = makeAny(entry.name);
      const int T = task->sequenceLength(64);
      Rng a(42), b(42), c(43);
      const Batch first = task->sample(8, T, Split::Train, a), again = task->sample(8, T, Split::Train, b);
      QVERIFY2(first.inputs == again.inputs && first.targets == again.targets, name);
      QVERIFY2(task->sample(8, T, Split::Train, c).inputs != first.inputs, name);
      Rng d(42), e(42);
      const Batch validation = task->sample(8, T, Split::Validation, d);
      QVERIFY2(validation.inputs == task->sample(8, T, Split::Validation, e).inputs, name);
      QVERIFY2(validation.inputs != first.inputs, name);
    }
  }

  void toyLanguageFollowsItsGrammar() {
    GrammarChecker checker;
    // The checker itself must tell agreement from disagreement.
    QCOMPARE(checker.check(split("the dog that the cats chase runs")), std::string());
    QCOMPARE(checker.objectRelatives, 1);
    QVERIFY(checker.check(split("the dog that the cats chases runs")).find("disagrees") != std::string::npos);
    QVERIFY(checker.check(split("the dog that the cats chase run")).find("disagrees") != std::string::npos);
    QVERIFY(checker.check(split("Alice and Bob sings")).find("disagrees") != std::string::npos);
    QVERIFY(checker.check(split("a dogs runs")).find("determiner") != std::string::npos);
    QCOMPARE(checker.check(split("these clever children that chase a fox that Bob sees sleep in the park")),
             std::string());

    auto task = makeOrFail("toy_language");
    QVERIFY(!task->hasAnswers());
    Rng rng(12);
    const Batch b = task->sample(40, 128, Split::Train, rng);
    GrammarChecker corpus;
    int recurring = 0;
    for (int row = 0; row < b.B; ++row) {
      const auto s = words(*task, b, row);
      const std::string error = corpus.check(s);
      QVERIFY2(error.empty(), error.c_str());
      std::map<std::string, int> names;
      for (const auto& w : s)
        if (std::find(toyLexicon().names.begin(), toyLexicon().names.end(), w) != toyLexicon().names.end()) ++names[w];
      QVERIFY(names.size() <= 3);  // the default cast
      recurring += std::any_of(names.begin(), names.end(), [](auto& n) { return n.second >= 2; });
    }
    QVERIFY(corpus.sentences > 40 * 8);
    QVERIFY(corpus.objectRelatives > 20);
    QVERIFY(corpus.subjectRelatives > 20);
    QVERIFY(corpus.coordinations > 5);
    QVERIFY(corpus.agreements > 40 * 10);
    QVERIFY(recurring >= 36);
  }

  void toyLanguageHasARichVocabulary() {
    auto task = makeOrFail("toy_language");
    const int vocab = task->vocabulary().size();
    QVERIFY(vocab >= 100 && vocab <= 200);
    Rng rng(13);
    const double entropy = unigramEntropy(*task, 64, 128, rng);
    qInfo("toy_language: %d words, unigram entropy %.3f nats/token (uniform: %.3f)", vocab, entropy, std::log(vocab));
    QVERIFY(entropy > 3.0 && entropy < std::log(vocab));
    auto copy = makeOrFail("copy", {{"symbols", 8}});
    const double copyEntropy = unigramEntropy(*copy, 64, 32, rng);  // answers are uniform over 8 letters
    QVERIFY(std::abs(copyEntropy - std::log(8.0)) < 0.05);
  }

  void textTaskSplitsTheFileNinetyTen() {
    auto task = makeOrFail("text", {}, textPath_.toStdString());
    QVERIFY(task);
    QVERIFY(!task->hasAnswers());
    QCOMPARE(task->vocabulary().size(), 8);
    QCOMPARE(task->vocabulary().level(), Vocabulary::Level::Character);
    QCOMPARE(task->sequenceLength(128), 99);  // must fit the 100 held-out characters
    QCOMPARE(task->sequenceLength(50), 50);
    Rng rng(14);
    const auto tokensOf = [&](Split split, int T) {
      const Batch b = task->sample(30, T, split, rng);
      std::set<std::string> seen;
      for (const int id : b.inputs) seen.insert(task->vocabulary().token(id));
      for (const int id : b.targets) seen.insert(task->vocabulary().token(id));
      return seen;
    };
    QVERIFY((tokensOf(Split::Train, 99) == std::set<std::string>{"a", "b", "c", "d", "e"}));
    QVERIFY((tokensOf(Split::Validation, 99) == std::set<std::string>{"x", "y", "\xC3\xA9"}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, task->sample(1, 100, Split::Validation, rng));
    QVERIFY(!tokensOf(Split::Train, 500).empty());  // training windows may be longer
  }

  void textTaskRejectsBadFiles() {
    const auto errorFor = [&](const std::string& bytes) {
      const QString path = dir_.filePath("bad.txt");
      writeFile(path, bytes);
      return makeError("text", {}, path.toStdString());
    };
    const std::string missing = makeError("text", {}, dir_.filePath("missing.txt").toStdString());
    QVERIFY2(missing.find("no such file") != std::string::npos, missing.c_str());
    QVERIFY(makeError("text").find("no file given") != std::string::npos);
    QVERIFY(makeError("text", {}, dir_.path().toStdString()).find("folder") != std::string::npos);
    QVERIFY(errorFor("").find("is empty") != std::string::npos);
    const std::string invalid = errorFor(std::string(200, 'a') + "\xFF" + std::string(200, 'b'));
    QVERIFY2(invalid.find("not UTF-8") != std::string::npos && invalid.find("offset 200") != std::string::npos,
             invalid.c_str());
    const std::string surrogate = errorFor(std::string(150, 'a') + "\xED\xA0\x80");
    QVERIFY2(surrogate.find("not UTF-8") != std::string::npos, surrogate.c_str());
    const std::string shortFile = errorFor("only a few words");
    QVERIFY2(shortFile.find("too short (16 characters)") != std::string::npos, shortFile.c_str());
    QVERIFY(makeError("text", {{"length", 4}}, textPath_.toStdString()).find("its settings are bpe_vocab") != std::string::npos);
    // A byte order mark is skipped rather than modelled.
    const QString bom = dir_.filePath("bom.txt");
    writeFile(bom, "\xEF\xBB\xBF" + std::string(120, 'q'));
    QCOMPARE(makeOrFail("text", {}, bom.toStdString())->vocabulary().size(), 1);
  }

  void badSettingsAreExplained() {
    const std::string unknown = makeError("nope");
    QVERIFY2(unknown.find("unknown task 'nope'") != std::string::npos && unknown.find("copy") != std::string::npos &&
                 unknown.find("toy_language") != std::string::npos,
             unknown.c_str());
    QVERIFY(makeError("copy", {{"symbols", 1}}).find("symbols = 1 is outside") != std::string::npos);
    QVERIFY(makeError("copy", {{"symbols", 2.5}}).find("whole number") != std::string::npos);
    const std::string typo = makeError("associative_recall", {{"pair", 3}});
    QVERIFY2(typo.find("unknown setting 'pair'") != std::string::npos && typo.find("pairs") != std::string::npos,
             typo.c_str());
    QVERIFY(makeError("associative_recall", {{"pairs", 20}, {"symbols", 10}}).find("exceeds") != std::string::npos);
    QVERIFY(makeError("dyck", {{"length", 63}}).find("even") != std::string::npos);
    QVERIFY(makeError("passkey", {{"digits", 12}, {"length", 20}}).find("too short") != std::string::npos);
    QVERIFY(makeError("modular_addition", {{"modulus", 500}}).find("modulus") != std::string::npos);
    QVERIFY(makeError("toy_language", {{"relative_clauses", 0.9}}).find("relative_clauses") != std::string::npos);
    TaskConfig tooShort;
    tooShort.name = "associative_recall";
    tooShort.seq_len = 3;
    std::string error;
    QVERIFY(!makeTask(tooShort, error));
    QVERIFY2(error.find("below its minimum of 4") != std::string::npos, error.c_str());

    auto copy = makeOrFail("copy");
    try {
      Rng rng(1);
      copy->sample(2, 1, Split::Train, rng);
      QFAIL("a sequence below the minimum length was accepted");
    } catch (const std::invalid_argument& e) {
      QCOMPARE(std::string(e.what()), std::string("task copy: sequences need at least 2 tokens, got 1"));
    }
  }

  void vocabularyEncodesAndDecodes() {
    const Vocabulary words({"the", "dog", "runs", "."}, Vocabulary::Level::Word);
    std::vector<int> ids;
    std::string error;
    QVERIFY(words.encode("  the dog\truns\n. ", ids, error));
    QVERIFY((ids == std::vector<int>{0, 1, 2, 3}));
    QCOMPARE(words.decode(ids), std::string("the dog runs ."));
    QVERIFY(!words.encode("the dog cat runs", ids, error));
    QCOMPARE(error, std::string("unknown token 'cat' at position 2; the vocabulary has 4 tokens"));
    QCOMPARE(words.id("cat"), -1);
    QCOMPARE(words.decode({1, 9}), std::string("dog <?>"));

    const Vocabulary characters({"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\n", " "},
                                Vocabulary::Level::Character);
    const std::string text = "a\xC3\xA9 \xE2\x82\xAC\n\xF0\x9F\x98\x80" "a";
    QVERIFY(characters.encode(text, ids, error));
    QVERIFY((ids == std::vector<int>{0, 1, 5, 2, 4, 3, 0}));
    QCOMPARE(characters.decode(ids), text);
    QVERIFY(!characters.encode("aa\tb", ids, error));
    QCOMPARE(error, std::string("unknown token '\\t' at position 2; the vocabulary has 6 tokens"));
    QVERIFY(!characters.encode("a\xC3", ids, error));
    QVERIFY2(error.find("invalid UTF-8 at byte 1") != std::string::npos, error.c_str());

    const std::string replacement = "\xEF\xBF\xBD";
    QVERIFY((splitUtf8("a\xFF\xC3\xA9") == std::vector<std::string>{"a", replacement, "\xC3\xA9"}));
    QVERIFY((splitUtf8("\xC0\xAF") == std::vector<std::string>{replacement, replacement}));  // overlong '/'
    QCOMPARE(static_cast<int>(splitUtf8("\xED\xA0\x80").size()), 3);                      // a surrogate
    QCOMPARE(static_cast<int>(splitUtf8("\xF4\x90\x80\x80").size()), 4);                   // above U+10FFFF
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Vocabulary({"a", "a"}, Vocabulary::Level::Word));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Vocabulary({"ab"}, Vocabulary::Level::Character));
  }

  void samplingIsFast() {
    for (const auto& entry : TaskRegistry::instance().entries()) {
      auto task = makeAny(entry.name);
      Rng rng(15);
      const int T = task->sequenceLength(128);  // the text file holds 99, the data folder 32
      const int repeats = 200;
      const auto start = std::chrono::steady_clock::now();
      long checksum = 0;
      for (int i = 0; i < repeats; ++i) checksum += task->sample(16, T, Split::Train, rng).inputs[0];
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      qInfo("%-20s 16 x %d batch: %.3f ms (checksum %ld)", entry.name.c_str(), T, ms / repeats, checksum);
      QVERIFY2(ms / repeats < 5.0, entry.name.c_str());  // generous: the machines are shared and noisy
    }
  }
};

QTEST_APPLESS_MAIN(TestTasks)
#include "test_tasks.moc"
