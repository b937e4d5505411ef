// induction: a random sequence followed by its repeat, "d a c b d a c b". From the repeat's second
// token on, each token is predictable by finding the previous token's earlier occurrence and
// copying its successor (what an induction head does); those tokens are the answers. The repeat's
// first token is not an answer: nothing but its position announces it.
// The random half deals symbols like cards from freshly shuffled decks, so within the first
// `symbols` tokens none recurs and the successor to look up is unambiguous.
// The default draws 16 of 32 symbols: were the half a full deck, "a symbol not yet repeated" would be
// a shortcut that stalls training on a plateau before induction heads form (measured here).
// A sequence of T tokens holds halves of n = (T + 1) / 2; an even T starts with one '_' pad.
#include <algorithm>

#include "data/task_support.h"

namespace attnlab {
namespace {

const SettingSpec kLength{"length", 16, 2, 4096, true, "tokens in the random half (natural length: 2 x length - 1)"};
const SettingSpec kSymbols{"symbols", 32, 2, 52, true, "distinct symbols"};
const SettingSpec kVary{"vary_length", 1, 0, 1, true,
                        "1: each sequence's half has 2 to the full number of tokens (leading '_' pads), so the repeat's offset varies"};
const SettingSpec kDealtPrefix{"dealt_prefix", 0, 0, 1, true,
                               "1: the tokens before a shorter half are symbols dealt like the half's, not '_' pads, so their count "
                               "does not announce the repeat's offset"};

class InductionTask : public GeneratedTask {
 public:
  InductionTask() : GeneratedTask("induction") {}

  std::vector<SettingSpec> settingSpecs() const override { return {kLength, kSymbols, kVary, kDealtPrefix}; }
  int sequenceLength(int context) const override { return std::min(context, 2 * length_ - 1); }
  int minSequenceLength() const override { return 3; }
  bool hasAnswers() const override { return true; }

 private:
  std::string setUp(const Settings& settings) override {
    length_ = static_cast<int>(settingOr(settings, kLength));
    symbols_ = static_cast<int>(settingOr(settings, kSymbols));
    vary_ = settingOr(settings, kVary) != 0;
    dealtPrefix_ = settingOr(settings, kDealtPrefix) != 0;
    std::vector<std::string> tokens = letterSymbols(symbols_);
    pad_ = symbols_;
    tokens.push_back("_");
    vocabulary_ = Vocabulary(std::move(tokens), Vocabulary::Level::Word);
    return {};
  }

  void write(SequenceWriter& out, Split, Rng& rng) const override {
    // With a fixed half length a head attending a fixed distance back copies the repeat without
    // looking at content; varying it leaves only the content-based induction circuit.
    const int fullHalf = out.remaining() / 2;
    const int half = vary_ ? rng.uniformInt(std::min(fullHalf, 2), fullHalf) : fullHalf;
    const int prefix = out.remaining() - 2 * half;
    if (!dealtPrefix_) out.repeat(pad_, prefix);
    // Pads announce the offset by their count (a layer-0 head can average them and a layer-1 head
    // attend that far back, no induction needed); dealt symbols say nothing of it.
    std::vector<int> deck(symbols_);
    for (int s = 0; s < symbols_; ++s) deck[s] = s;
    auto deal = [&](int i) {
      const int slot = i % symbols_;  // partial Fisher-Yates: each deck position draws from the unused rest
      std::swap(deck[slot], deck[rng.uniformInt(slot, symbols_ - 1)]);
      return deck[slot];
    };
    const int dealt = dealtPrefix_ ? prefix : 0;
    for (int i = 0; i < dealt; ++i) out.put(deal(i));
    std::vector<int> first(half);
    for (int i = 0; i < half; ++i) {
      first[i] = deal(dealt + i);
      out.put(first[i]);
    }
    for (int i = 0; i < half; ++i) out.put(first[i], i > 0);
  }

  int length_ = 0;
  int symbols_ = 0;
  bool vary_ = true;
  bool dealtPrefix_ = false;
  int pad_ = 0;
};

ATTNLAB_REGISTER(TaskRegistry, "induction",
                 "x1 .. xn x1 .. xn: a random sequence repeats; answers are the repeat after its first token",
                 [] { return std::make_unique<InductionTask>(); });

}  // namespace
}  // namespace attnlab
