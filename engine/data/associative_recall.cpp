// associative_recall: "c 4 a 17 f 4 ? a 17": distinct keys (letters) paired with values
// (numbers), then '?' and one of the keys; the answer is its value. A sequence of T tokens holds
// p = min(symbols, (T - 2) / 2) pairs and starts with '_' pads for whatever is left over.
#include <algorithm>

#include "data/task_support.h"

namespace attnlab {
namespace {

const SettingSpec kPairs{"pairs", 12, 1, 52, true, "key-value pairs before the queries (natural length: 2 x pairs + 3 x queries - 1)"};
const SettingSpec kSymbols{"symbols", 24, 2, 52, true, "distinct keys, and distinct values"};
const SettingSpec kQueries{"queries", 1, 1, 16, true, "keys asked after the pairs, each '? k v' (more answers per sequence learn faster)"};

class AssociativeRecallTask : public GeneratedTask {
 public:
  AssociativeRecallTask() : GeneratedTask("associative_recall") {}

  std::vector<SettingSpec> settingSpecs() const override { return {kPairs, kSymbols, kQueries}; }
  int sequenceLength(int context) const override { return std::min(context, 2 * pairs_ + 3 * queries_ - 1); }
  int minSequenceLength() const override { return 4; }
  bool hasAnswers() const override { return true; }

 private:
  std::string setUp(const Settings& settings) override {
    pairs_ = static_cast<int>(settingOr(settings, kPairs));
    symbols_ = static_cast<int>(settingOr(settings, kSymbols));
    queries_ = static_cast<int>(settingOr(settings, kQueries));
    if (pairs_ > symbols_)
      return "task associative_recall: pairs = " + std::to_string(pairs_) + " exceeds symbols = " +
             std::to_string(symbols_) + "; the keys of a sequence must be distinct";
    std::vector<std::string> tokens = letterSymbols(symbols_);
    for (std::string& value : numberSymbols(symbols_)) tokens.push_back(std::move(value));
    tokens.insert(tokens.end(), {"?", "_"});
    vocabulary_ = Vocabulary(std::move(tokens), Vocabulary::Level::Word);
    query_ = token("?");
    pad_ = token("_");
    return {};
  }

  // Keys are ids 0..symbols-1, values symbols..2*symbols-1.
  void write(SequenceWriter& out, Split, Rng& rng) const override {
    const int queries = std::min(queries_, std::max(1, (out.remaining() - 5) / 3));  // leave room for one pair
    const int pairs = std::min(symbols_, (out.remaining() - 3 * queries) / 2);
    out.repeat(pad_, out.remaining() - (2 * pairs + 3 * queries));
    std::vector<int> keys(symbols_), values(pairs);
    for (int s = 0; s < symbols_; ++s) keys[s] = s;
    for (int i = 0; i < pairs; ++i) {
      std::swap(keys[i], keys[rng.uniformInt(i, symbols_ - 1)]);
      values[i] = symbols_ + rng.uniformInt(0, symbols_ - 1);
      out.put(keys[i]);
      out.put(values[i]);
    }
    for (int q = 0; q < queries; ++q) {
      const int asked = rng.uniformInt(0, pairs - 1);
      out.put(query_);
      out.put(keys[asked]);
      out.put(values[asked], true);
    }
  }

  int pairs_ = 0;
  int symbols_ = 0;
  int queries_ = 1;
  int query_ = 0;
  int pad_ = 0;
};

ATTNLAB_REGISTER(TaskRegistry, "associative_recall",
                 "k1 v1 .. kn vn ? k -> v: answer the value paired with the queried key",
                 [] { return std::make_unique<AssociativeRecallTask>(); });

}  // namespace
}  // namespace attnlab
