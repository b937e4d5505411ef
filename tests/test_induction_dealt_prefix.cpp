// The induction task's dealt_prefix setting: the tokens before a shorter half are dealt symbols, not
// '_' pads, so nothing but the content says where the repeat starts (with pads, their count tells
// the offset, and the trained preset uses that shortcut instead of a previous-token head; see the
// guide's "Head composition"). Each row is [dealt symbols, r, r] with every token before the repeat
// distinct, the answers the repeat after its first token; the default keeps the pads.
#include <QtTest>

#include <set>

#include "data/task.h"

using namespace attnlab;

namespace {

std::unique_ptr<Task> induction(int dealt) {
  TaskConfig config;
  config.name = "induction";
  config.settings = {{"length", 16}, {"symbols", 32}, {"dealt_prefix", dealt}};
  std::string error;
  auto task = makeTask(config, error);
  if (!task) qWarning("%s", error.c_str());
  return task;
}

}  // namespace

class TestInductionDealtPrefix : public QObject {
  Q_OBJECT

 private slots:
  void prefixIsDealtSymbols() {
    auto task = induction(1);
    QVERIFY(task);
    const int T = task->sequenceLength(64), pad = task->vocabulary().id("_");
    Rng rng(3);
    const Batch b = task->sample(64, T, Split::Train, rng);
    std::set<int> halves;
    for (int row = 0; row < b.B; ++row) {
      std::vector<int> s(b.inputs.begin() + row * T, b.inputs.begin() + (row + 1) * T);
      s.push_back(b.targets[(row + 1) * T - 1]);  // the whole sequence s[0..T]
      const int* targets = b.targets.data() + row * T;
      const int firstAnswer = static_cast<int>(std::find_if(targets, targets + T, [](int t) { return t >= 0; }) - targets);
      const int half = T + 1 - firstAnswer, prefix = firstAnswer - half;  // the repeat starts at firstAnswer
      QVERIFY(prefix >= 0);
      halves.insert(half);
      QVERIFY(std::find(s.begin(), s.end(), pad) == s.end());
      QVERIFY(std::equal(s.begin() + prefix, s.begin() + firstAnswer, s.begin() + firstAnswer));
      QCOMPARE(static_cast<int>(std::set<int>(s.begin(), s.begin() + firstAnswer).size()), firstAnswer);  // all distinct
      for (int t = firstAnswer; t < T; ++t) QCOMPARE(targets[t], s[t + 1]);
    }
    QVERIFY(halves.size() > 5);  // the offset varies
  }

  void defaultKeepsThePads() {
    auto padded = induction(0);
    TaskConfig config;
    config.name = "induction";
    config.settings = {{"length", 16}, {"symbols", 32}};
    std::string error;
    auto plain = makeTask(config, error);
    Rng a(4), b(4);
    const Batch x = padded->sample(16, 31, Split::Train, a), y = plain->sample(16, 31, Split::Train, b);
    QVERIFY(x.inputs == y.inputs && x.targets == y.targets);
    QVERIFY(std::count(x.inputs.begin(), x.inputs.end(), padded->vocabulary().id("_")) > 0);
  }
};

QTEST_APPLESS_MAIN(TestInductionDealtPrefix)
#include "test_induction_dealt_prefix.moc"
