#pragma once
// "x1 .. xn > f(x1 .. xn)": n random symbols, a '>', then the list transformed by f. The
// answers are the transformed list. copy, reverse and sorting differ only in f and names.
// A sequence of T tokens holds n = T / 2 items; an odd T starts with one '_' pad.
#include <algorithm>

#include "data/task_support.h"

namespace attnlab {

class ListTask : public GeneratedTask {
 public:
  enum class Symbols { Letters, Numbers };
  ListTask(std::string name, Symbols style, int maxSymbols);

  std::vector<SettingSpec> settingSpecs() const override;
  int sequenceLength(int context) const override { return std::min(context, 2 * length_); }
  int minSequenceLength() const override { return 2; }
  bool hasAnswers() const override { return true; }

 protected:
  // Rewrites the items (symbol indices 0..symbols-1) into the expected answer, in place.
  virtual void transform(std::vector<int>& items) const = 0;

 private:
  std::string setUp(const Settings& settings) override;
  void write(SequenceWriter& out, Split split, Rng& rng) const override;

  Symbols style_;
  int maxSymbols_;
  int length_ = 0;
  int symbols_ = 0;
  int arrow_ = 0;
  int pad_ = 0;
};

}  // namespace attnlab
