// dyck: balanced brackets of 2-4 kinds, "( [ ] ( ) ) [ ]". Answer positions: every position whose
// next token is a closing bracket. Whether a bracket closes there is the generator's coin, but
// which one closes is forced: it must match the innermost open bracket, so a model that tracks
// the nesting gets every answer right. Generation: open (a random kind) or close with equal odds,
// except that depth 0 must open, and max_depth or "only enough room left to close" must close.
// A sequence of T tokens holds T + 1 brackets, after one '_' pad when T + 1 is odd.
#include <algorithm>
#include <array>

#include "data/task_support.h"

namespace attnlab {
namespace {

const SettingSpec kKinds{"kinds", 2, 2, 4, true, "bracket kinds: () [] {} <>"};
const SettingSpec kLength{"length", 64, 2, 4096, true, "brackets per sequence, even (natural length: length - 1)"};
const SettingSpec kMaxDepth{"max_depth", 8, 1, 64, true, "deepest nesting"};

class DyckTask : public GeneratedTask {
 public:
  DyckTask() : GeneratedTask("dyck") {}

  std::vector<SettingSpec> settingSpecs() const override { return {kKinds, kLength, kMaxDepth}; }
  int sequenceLength(int context) const override { return std::min(context, length_ - 1); }
  int minSequenceLength() const override { return 1; }
  bool hasAnswers() const override { return true; }

 private:
  std::string setUp(const Settings& settings) override {
    kinds_ = static_cast<int>(settingOr(settings, kKinds));
    length_ = static_cast<int>(settingOr(settings, kLength));
    maxDepth_ = static_cast<int>(settingOr(settings, kMaxDepth));
    if (length_ % 2 != 0)
      return "task dyck: length = " + std::to_string(length_) + " must be even (every bracket closes)";
    static const std::string kBrackets = "()[]{}<>";
    std::vector<std::string> tokens;
    for (int i = 0; i < 2 * kinds_; ++i) tokens.emplace_back(1, kBrackets[i]);  // kind k: open 2k, close 2k+1
    pad_ = 2 * kinds_;
    tokens.push_back("_");
    vocabulary_ = Vocabulary(std::move(tokens), Vocabulary::Level::Word);
    return {};
  }

  void write(SequenceWriter& out, Split, Rng& rng) const override {
    out.repeat(pad_, out.remaining() % 2);
    std::array<int, 64> open{};  // kinds of the open brackets, innermost last
    int depth = 0;
    while (out.remaining() > 0) {
      const bool mustOpen = depth == 0;
      const bool mustClose = depth == maxDepth_ || depth == out.remaining();
      if (mustOpen || (!mustClose && rng.bernoulli(0.5))) {
        open[depth] = rng.uniformInt(0, kinds_ - 1);
        out.put(2 * open[depth]);
        ++depth;
      } else {
        --depth;
        out.put(2 * open[depth] + 1, true);
      }
    }
  }

  int kinds_ = 0;
  int length_ = 0;
  int maxDepth_ = 0;
  int pad_ = 0;
};

ATTNLAB_REGISTER(TaskRegistry, "dyck",
                 "balanced brackets of several kinds; answers: each closing bracket, which must match the "
                 "innermost open one",
                 [] { return std::make_unique<DyckTask>(); });

}  // namespace
}  // namespace attnlab
