// modular_addition: "a + b = c" with c = (a + b) mod p, numbers as single tokens. The p x p
// pairs (a, b) are split once, by a fixed shuffle, into training pairs and held-out validation
// pairs, so validation accuracy measures generalisation to unseen sums (grokking-style).
// A sequence of T tokens packs k = (T + 2) / 6 problems joined by ';', after '_' pads.
#include <algorithm>
#include <cmath>

#include "data/task_support.h"

namespace attnlab {
namespace {

const SettingSpec kModulus{"modulus", 31, 2, 199, true, "p: numbers are 0..p-1 and sums wrap around"};
const SettingSpec kProblems{"problems", 1, 1, 64, true, "problems per sequence (natural length: 6 x problems - 2)"};
const SettingSpec kTrainFraction{"train_fraction", 0.8, 0.1, 0.9, false, "share of the p x p pairs used for training"};

class ModularAdditionTask : public GeneratedTask {
 public:
  ModularAdditionTask() : GeneratedTask("modular_addition") {}

  std::vector<SettingSpec> settingSpecs() const override { return {kModulus, kProblems, kTrainFraction}; }
  int sequenceLength(int context) const override { return std::min(context, 6 * problems_ - 2); }
  int minSequenceLength() const override { return 4; }
  bool hasAnswers() const override { return true; }

 private:
  std::string setUp(const Settings& settings) override {
    modulus_ = static_cast<int>(settingOr(settings, kModulus));
    problems_ = static_cast<int>(settingOr(settings, kProblems));
    std::vector<std::string> tokens = numberSymbols(modulus_);
    tokens.insert(tokens.end(), {"+", "=", ";", "_"});
    vocabulary_ = Vocabulary(std::move(tokens), Vocabulary::Level::Word);
    plus_ = token("+");
    equals_ = token("=");
    separator_ = token(";");
    pad_ = token("_");

    const int all = modulus_ * modulus_;
    std::vector<int> pairs(all);  // pair (a, b) stored as a * p + b
    for (int i = 0; i < all; ++i) pairs[i] = i;
    Rng splitter(0x5EED0F5A17ull);  // fixed: the split must not depend on the training seed
    std::shuffle(pairs.begin(), pairs.end(), splitter.engine());
    const long trainCount = std::clamp<long>(std::lround(settingOr(settings, kTrainFraction) * all), 1, all - 1);
    trainPairs_.assign(pairs.begin(), pairs.begin() + trainCount);
    validationPairs_.assign(pairs.begin() + trainCount, pairs.end());
    return {};
  }

  void write(SequenceWriter& out, Split split, Rng& rng) const override {
    const std::vector<int>& pairs = split == Split::Train ? trainPairs_ : validationPairs_;
    const int problems = (out.remaining() + 1) / 6;
    out.repeat(pad_, out.remaining() - (6 * problems - 1));
    for (int i = 0; i < problems; ++i) {
      if (i > 0) out.put(separator_);
      const int pair = pairs[rng.uniformInt(0, static_cast<int>(pairs.size()) - 1)];
      const int a = pair / modulus_, b = pair % modulus_;
      out.put(a);
      out.put(plus_);
      out.put(b);
      out.put(equals_);
      out.put((a + b) % modulus_, true);
    }
  }

  int modulus_ = 0;
  int problems_ = 0;
  int plus_ = 0, equals_ = 0, separator_ = 0, pad_ = 0;
  std::vector<int> trainPairs_, validationPairs_;
};

ATTNLAB_REGISTER(TaskRegistry, "modular_addition",
                 "a + b = c with c = (a + b) mod p; held-out (a, b) pairs validate (answer: c)",
                 [] { return std::make_unique<ModularAdditionTask>(); });

}  // namespace
}  // namespace attnlab
