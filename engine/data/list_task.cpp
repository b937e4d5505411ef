#include "data/list_task.h"

namespace attnlab {

ListTask::ListTask(std::string name, Symbols style, int maxSymbols)
    : GeneratedTask(std::move(name)), style_(style), maxSymbols_(maxSymbols) {}

std::vector<SettingSpec> ListTask::settingSpecs() const {
  return {{"length", 16, 1, 2048, true, "items in the list (natural length: 2 x length)"},
          {"symbols", 16, 2, static_cast<double>(maxSymbols_), true, "distinct symbols the items are drawn from"}};
}

std::string ListTask::setUp(const Settings& settings) {
  const auto specs = settingSpecs();
  length_ = static_cast<int>(settingOr(settings, specs[0]));
  symbols_ = static_cast<int>(settingOr(settings, specs[1]));
  std::vector<std::string> tokens = style_ == Symbols::Letters ? letterSymbols(symbols_) : numberSymbols(symbols_);
  arrow_ = static_cast<int>(tokens.size());
  pad_ = arrow_ + 1;
  tokens.insert(tokens.end(), {">", "_"});
  vocabulary_ = Vocabulary(std::move(tokens), Vocabulary::Level::Word);
  return {};
}

void ListTask::write(SequenceWriter& out, Split, Rng& rng) const {
  const int items = (out.remaining() - 1) / 2;
  out.repeat(pad_, out.remaining() - (2 * items + 1));
  std::vector<int> list(items);
  for (int& item : list) {
    item = rng.uniformInt(0, symbols_ - 1);
    out.put(item);
  }
  out.put(arrow_);
  transform(list);
  for (const int item : list) out.put(item, true);
}

}  // namespace attnlab
