// toy_language, the default corpus: sentences from a small probabilistic grammar, word level.
//
//   sentence      := subject(n) verbPhrase(n) [preposition "the" place] "."
//   subject(n)    := name                          (n singular)
//                  | name "and" name               (n plural)
//                  | nounPhrase(n) [relative(n)]
//   nounPhrase(n) := determiner(n) [adjective] noun(n)
//   relative(n)   := "that" verbPhrase(n)                  "the dog that chases the cats"
//                  | "that" subject(m) transitiveVerb(m)   "the dog that the cats chase"
//   verbPhrase(n) := transitiveVerb(n) object | intransitiveVerb(n) [adverb]
//   object        := name | nounPhrase(m) [relative(m)]
//
// Verbs agree in number with their subject, also across nested relative clauses ("the dog that
// the cats chase runs"), and determiners with their noun. Each sequence picks a small cast of
// names and draws every name from it, so a name seen earlier predicts the names that follow.
// Every sequence starts at a sentence; the loss covers every position.
#include <algorithm>

#include "data/task_support.h"
#include "data/toy_language.h"

namespace attnlab {

const ToyLexicon& toyLexicon() {
  static const ToyLexicon lexicon = [] {
    ToyLexicon l;
    l.singularDeterminers = {"a", "this", "every"};
    l.pluralDeterminers = {"these", "some", "many", "two"};
    l.adjectives = {"big",    "small", "tall",  "young", "happy", "sad",   "red",   "green",
                    "quiet",  "loud",  "clever", "lazy", "brave", "tired", "hungry"};
    l.nouns = {{"dog", "dogs"},         {"cat", "cats"},           {"bird", "birds"},       {"farmer", "farmers"},
               {"teacher", "teachers"}, {"student", "students"},   {"king", "kings"},       {"queen", "queens"},
               {"doctor", "doctors"},   {"baker", "bakers"},       {"horse", "horses"},     {"rabbit", "rabbits"},
               {"fox", "foxes"},        {"wolf", "wolves"},        {"child", "children"},   {"girl", "girls"},
               {"boy", "boys"},         {"man", "men"},            {"woman", "women"},      {"friend", "friends"},
               {"sailor", "sailors"},   {"painter", "painters"},   {"robot", "robots"},     {"dragon", "dragons"},
               {"monkey", "monkeys"}};
    l.transitiveVerbs = {{"sees", "see"},     {"chases", "chase"}, {"likes", "like"},     {"helps", "help"},
                         {"follows", "follow"}, {"finds", "find"}, {"visits", "visit"},   {"knows", "know"},
                         {"calls", "call"},   {"watches", "watch"}, {"fears", "fear"},    {"teaches", "teach"},
                         {"feeds", "feed"},   {"meets", "meet"},   {"loves", "love"}};
    l.intransitiveVerbs = {{"runs", "run"},     {"sleeps", "sleep"}, {"sings", "sing"},   {"laughs", "laugh"},
                           {"waits", "wait"},   {"smiles", "smile"}, {"works", "work"},   {"dances", "dance"},
                           {"jumps", "jump"},   {"swims", "swim"},   {"cries", "cry"},    {"hides", "hide"}};
    l.adverbs = {"quickly", "slowly", "loudly", "quietly", "again", "often"};
    l.prepositions = {"in", "near", "under", "behind", "by"};
    l.places = {"garden", "river", "market", "bridge", "forest", "house", "park", "village"};
    l.names = {"Alice", "Bob",  "Carol", "Dave", "Emma", "Frank", "Grace", "Henry", "Ivy", "Jack",
               "Kate",  "Leo",  "Mia",   "Noah", "Olga", "Paul",  "Rosa",  "Sam",   "Tina", "Victor"};
    return l;
  }();
  return lexicon;
}

namespace {

const SettingSpec kCast{"cast", 3, 1, 8, true, "proper names recurring within one sequence"};
const SettingSpec kRelativeClauses{"relative_clauses", 0.25, 0, 0.5, false,
                                   "chance that a subject noun phrase takes a relative clause (objects: half)"};

constexpr double kNameChance = 0.3;          // a subject or object is a proper name
constexpr double kCoordinationChance = 0.15;  // a name subject is "name and name"
constexpr double kAdjectiveChance = 0.3;
constexpr double kArticleChance = 0.5;  // "the" rather than a number-marked determiner
constexpr double kTransitiveChance = 0.55;
constexpr double kAdverbChance = 0.3;
constexpr double kPlaceChance = 0.2;
constexpr int kMaxNesting = 2;  // relative clauses inside relative clauses

// Token ids of a word with two number forms.
struct FormIds {
  int singular = 0;
  int plural = 0;
  int of(bool isPlural) const { return isPlural ? plural : singular; }
};

struct GrammarIds {
  int period = 0, that = 0, conjunction = 0, article = 0;
  std::vector<int> singularDeterminers, pluralDeterminers, adjectives, adverbs, prepositions, places, names;
  std::vector<FormIds> nouns, transitiveVerbs, intransitiveVerbs;
};

// Writes sentences of one sequence into `out`, following the grammar above.
class SentenceWriter {
 public:
  SentenceWriter(const GrammarIds& g, const std::vector<int>& cast, double relativeChance, Rng& rng,
                 std::vector<int>& out)
      : g_(g), cast_(cast), relativeChance_(relativeChance), rng_(rng), out_(out) {}

  void sentence() {
    const bool plural = subject(0);
    verbPhrase(plural, 0);
    if (chance(kPlaceChance)) {
      out_.push_back(pick(g_.prepositions));
      out_.push_back(g_.article);
      out_.push_back(pick(g_.places));
    }
    out_.push_back(g_.period);
  }

 private:
  bool chance(double p) { return rng_.bernoulli(p); }
  int pick(const std::vector<int>& ids) { return ids[rng_.uniformInt(0, static_cast<int>(ids.size()) - 1)]; }
  template <class T>
  const T& pickForms(const std::vector<T>& forms) {
    return forms[rng_.uniformInt(0, static_cast<int>(forms.size()) - 1)];
  }

  // Returns whether the subject is plural.
  bool subject(int nesting) {
    if (chance(kNameChance)) {
      const int first = rng_.uniformInt(0, static_cast<int>(cast_.size()) - 1);
      out_.push_back(cast_[first]);
      if (cast_.size() < 2 || !chance(kCoordinationChance)) return false;
      const int offset = rng_.uniformInt(1, static_cast<int>(cast_.size()) - 1);  // a different name
      out_.push_back(g_.conjunction);
      out_.push_back(cast_[(first + offset) % cast_.size()]);
      return true;
    }
    const bool plural = nounPhrase();
    if (nesting < kMaxNesting && chance(relativeChance_)) relative(plural, nesting + 1);
    return plural;
  }

  void object(int nesting) {
    if (chance(kNameChance)) {
      out_.push_back(pick(cast_));
      return;
    }
    const bool plural = nounPhrase();
    if (nesting < kMaxNesting && chance(relativeChance_ / 2)) relative(plural, nesting + 1);
  }

  bool nounPhrase() {
    const bool plural = rng_.bernoulli(0.5);
    if (chance(kArticleChance))
      out_.push_back(g_.article);
    else
      out_.push_back(pick(plural ? g_.pluralDeterminers : g_.singularDeterminers));
    if (chance(kAdjectiveChance)) out_.push_back(pick(g_.adjectives));
    out_.push_back(pickForms(g_.nouns).of(plural));
    return plural;
  }

  void relative(bool headPlural, int nesting) {
    out_.push_back(g_.that);
    if (chance(0.5)) {
      verbPhrase(headPlural, nesting);  // the head is the subject of the clause
      return;
    }
    const bool innerPlural = subject(nesting);  // the head is the object of the clause
    out_.push_back(pickForms(g_.transitiveVerbs).of(innerPlural));
  }

  void verbPhrase(bool plural, int nesting) {
    if (chance(kTransitiveChance)) {
      out_.push_back(pickForms(g_.transitiveVerbs).of(plural));
      object(nesting);
      return;
    }
    out_.push_back(pickForms(g_.intransitiveVerbs).of(plural));
    if (chance(kAdverbChance)) out_.push_back(pick(g_.adverbs));
  }

  const GrammarIds& g_;
  const std::vector<int>& cast_;
  double relativeChance_;
  Rng& rng_;
  std::vector<int>& out_;
};

class ToyLanguageTask : public GeneratedTask {
 public:
  ToyLanguageTask() : GeneratedTask("toy_language") {}

  std::vector<SettingSpec> settingSpecs() const override { return {kCast, kRelativeClauses}; }
  bool hasAnswers() const override { return false; }

 private:
  std::string setUp(const Settings& settings) override {
    cast_ = static_cast<int>(settingOr(settings, kCast));
    relativeChance_ = settingOr(settings, kRelativeClauses);
    const ToyLexicon& l = toyLexicon();
    std::vector<std::string> words = {l.period, l.relativePronoun, l.conjunction, l.article};
    const auto addAll = [&](const std::vector<std::string>& list) {
      words.insert(words.end(), list.begin(), list.end());
    };
    const auto addForms = [&](const std::vector<WordForms>& list) {
      for (const auto& f : list) words.push_back(f.singular);
      for (const auto& f : list) words.push_back(f.plural);
    };
    addAll(l.singularDeterminers);
    addAll(l.pluralDeterminers);
    addAll(l.adjectives);
    addForms(l.nouns);
    addForms(l.transitiveVerbs);
    addForms(l.intransitiveVerbs);
    addAll(l.adverbs);
    addAll(l.prepositions);
    addAll(l.places);
    addAll(l.names);
    vocabulary_ = Vocabulary(std::move(words), Vocabulary::Level::Word);

    const auto ids = [&](const std::vector<std::string>& list) {
      std::vector<int> out;
      for (const auto& w : list) out.push_back(token(w));
      return out;
    };
    const auto formIds = [&](const std::vector<WordForms>& list) {
      std::vector<FormIds> out;
      for (const auto& f : list) out.push_back({token(f.singular), token(f.plural)});
      return out;
    };
    grammar_.period = token(l.period);
    grammar_.that = token(l.relativePronoun);
    grammar_.conjunction = token(l.conjunction);
    grammar_.article = token(l.article);
    grammar_.singularDeterminers = ids(l.singularDeterminers);
    grammar_.pluralDeterminers = ids(l.pluralDeterminers);
    grammar_.adjectives = ids(l.adjectives);
    grammar_.adverbs = ids(l.adverbs);
    grammar_.prepositions = ids(l.prepositions);
    grammar_.places = ids(l.places);
    grammar_.names = ids(l.names);
    grammar_.nouns = formIds(l.nouns);
    grammar_.transitiveVerbs = formIds(l.transitiveVerbs);
    grammar_.intransitiveVerbs = formIds(l.intransitiveVerbs);
    return {};
  }

  void write(SequenceWriter& out, Split, Rng& rng) const override {
    std::vector<int> names = grammar_.names;
    for (int i = 0; i < cast_; ++i) std::swap(names[i], names[rng.uniformInt(i, static_cast<int>(names.size()) - 1)]);
    names.resize(cast_);
    std::vector<int> words;
    words.reserve(out.remaining() + 64);
    SentenceWriter writer(grammar_, names, relativeChance_, rng, words);
    while (static_cast<int>(words.size()) < out.remaining()) writer.sentence();
    for (int i = 0; out.remaining() > 0; ++i) out.put(words[i], true);
  }

  int cast_ = 0;
  double relativeChance_ = 0;
  GrammarIds grammar_;
};

ATTNLAB_REGISTER(TaskRegistry, "toy_language",
                 "sentences of a small grammar: number agreement, nested relative clauses, recurring names; "
                 "predict every next word",
                 [] { return std::make_unique<ToyLanguageTask>(); });

}  // namespace
}  // namespace attnlab
