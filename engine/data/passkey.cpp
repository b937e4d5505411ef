// passkey: "the sky is blue . here we go . the pass key is 4 0 7 1 3 . there and back again .
// ... what is the pass key ? 4 0 7 1 3". Filler sentences repeat around the hidden statement,
// which starts at a random sentence boundary; the answers are the digits after '?'. The filler
// grows with the sequence, so length_multiplier (or any longer seqLen) tests retrieval beyond the
// trained length.
#include <algorithm>
#include <array>
#include <cmath>

#include "data/task_support.h"

namespace attnlab {
namespace {

const SettingSpec kDigits{"digits", 5, 1, 12, true, "digits of the pass key"};
const SettingSpec kLength{"length", 64, 12, 65536, true, "natural sequence length before the multiplier"};
const SettingSpec kMultiplier{"length_multiplier", 1, 1, 64, false, "scales the natural length (extrapolation tests)"};

const std::vector<std::string> kFiller = {"the",  "grass", "is",  "green", ".",    "the",   "sky",  "is",
                                          "blue", ".",     "the", "sun",   "is",   "yellow", ".",   "here",
                                          "we",   "go",    ".",   "there", "and",  "back",  "again", "."};
constexpr int kFixedTokens = 11;  // "the pass key is" + "." + "what is the pass key ?", besides 2 x digits

class PasskeyTask : public GeneratedTask {
 public:
  PasskeyTask() : GeneratedTask("passkey") {}

  std::vector<SettingSpec> settingSpecs() const override { return {kDigits, kLength, kMultiplier}; }
  int sequenceLength(int context) const override {
    return static_cast<int>(std::min<double>(context, std::floor(length_ * multiplier_)));
  }
  int minSequenceLength() const override { return kFixedTokens + 2 * digits_ - 1; }
  bool hasAnswers() const override { return true; }

 private:
  std::string setUp(const Settings& settings) override {
    digits_ = static_cast<int>(settingOr(settings, kDigits));
    length_ = static_cast<int>(settingOr(settings, kLength));
    multiplier_ = settingOr(settings, kMultiplier);
    if (length_ < minSequenceLength())
      return "task passkey: length = " + std::to_string(length_) + " is too short for " + std::to_string(digits_) +
             " digits; it needs at least " + std::to_string(minSequenceLength());
    std::vector<std::string> tokens;
    for (const std::string& word : kFiller)
      if (std::find(tokens.begin(), tokens.end(), word) == tokens.end()) tokens.push_back(word);
    tokens.insert(tokens.end(), {"pass", "key", "what", "?"});
    for (std::string& digit : numberSymbols(10)) tokens.push_back(std::move(digit));
    vocabulary_ = Vocabulary(std::move(tokens), Vocabulary::Level::Word);
    filler_.clear();
    for (const std::string& word : kFiller) filler_.push_back(token(word));
    the_ = token("the");
    pass_ = token("pass");
    key_ = token("key");
    is_ = token("is");
    period_ = token(".");
    what_ = token("what");
    question_ = token("?");
    zero_ = token("0");
    return {};
  }

  void write(SequenceWriter& out, Split, Rng& rng) const override {
    std::array<int, 12> digits{};
    for (int d = 0; d < digits_; ++d) digits[d] = zero_ + rng.uniformInt(0, 9);
    const int fillerTokens = out.remaining() - (kFixedTokens + 2 * digits_);
    const int cycle = static_cast<int>(filler_.size());
    const int phase = (cycle - fillerTokens % cycle) % cycle;  // so that the filler ends with a '.'
    int hideAt = rng.uniformInt(0, fillerTokens);
    while (hideAt > 0 && filler_[(phase + hideAt - 1) % cycle] != period_) --hideAt;  // at a sentence start
    for (int i = 0; i < fillerTokens; ++i) {
      if (i == hideAt) writeStatement(out, digits);
      out.put(filler_[(phase + i) % cycle]);
    }
    if (hideAt == fillerTokens) writeStatement(out, digits);
    for (const int word : {what_, is_, the_, pass_, key_, question_}) out.put(word);
    for (int d = 0; d < digits_; ++d) out.put(digits[d], true);
  }

  void writeStatement(SequenceWriter& out, const std::array<int, 12>& digits) const {
    for (const int word : {the_, pass_, key_, is_}) out.put(word);
    for (int d = 0; d < digits_; ++d) out.put(digits[d]);
    out.put(period_);
  }

  int digits_ = 0;
  int length_ = 0;
  double multiplier_ = 1;
  std::vector<int> filler_;
  int the_ = 0, pass_ = 0, key_ = 0, is_ = 0, period_ = 0, what_ = 0, question_ = 0, zero_ = 0;
};

ATTNLAB_REGISTER(TaskRegistry, "passkey",
                 "filler hides 'the pass key is d1 .. dk .'; after 'what is the pass key ?' answer the digits",
                 [] { return std::make_unique<PasskeyTask>(); });

}  // namespace
}  // namespace attnlab
