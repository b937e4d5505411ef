// Each alternative of a pattern is tried in order at the current code point, as a regex engine
// would; each returns the number of code points it matches (0: no match). The greedy runs and the
// (?!\S) look-ahead are resolved by measuring the whitespace run once, instead of backtracking.
#include "tokenizer/split_pattern.h"

namespace attnlab {
namespace {

class Matcher {
 public:
  Matcher(SplitPattern pattern, std::string_view text) : pattern_(pattern), cps_(decodeCodePoints(text)) {}

  void split(std::string_view text, std::vector<std::string_view>& pieces) const {
    for (size_t i = 0; i < cps_.size();) {
      const size_t n = matchAt(i);
      const size_t end = i + n;
      const size_t from = cps_[i].offset;
      const size_t to = end < cps_.size() ? cps_[end].offset : text.size();
      pieces.push_back(text.substr(from, to - from));
      i = end;
    }
  }

 private:
  char32_t at(size_t i) const { return i < cps_.size() ? cps_[i].value : 0; }
  bool has(size_t i) const { return i < cps_.size(); }
  bool space(size_t i) const { return has(i) && isWhiteSpace(cps_[i].value); }
  bool letter(size_t i) const { return has(i) && isLetter(cps_[i].value); }
  bool number(size_t i) const { return has(i) && isNumber(cps_[i].value); }
  bool other(size_t i) const { return has(i) && !space(i) && !letter(i) && !number(i); }
  bool newline(size_t i) const { return at(i) == '\r' || at(i) == '\n'; }

  template <class Pred>
  size_t runFrom(size_t i, Pred pred, size_t limit = SIZE_MAX) const {
    size_t n = 0;
    while (n < limit && pred(i + n)) ++n;
    return n;
  }

  size_t matchAt(size_t i) const {
    size_t n = 0;
    if (pattern_ == SplitPattern::Gpt2) {
      if ((n = contraction(i, false))) return n;
      if ((n = optionalSpaceThen(i, [this](size_t j) { return letter(j); }))) return n;
      if ((n = optionalSpaceThen(i, [this](size_t j) { return number(j); }))) return n;
      if ((n = optionalSpaceThen(i, [this](size_t j) { return other(j); }))) return n;
    } else {
      if ((n = contraction(i, true))) return n;
      // [^\r\n\p{L}\p{N}]?\p{L}+
      if (has(i) && !newline(i) && !letter(i) && !number(i) && letter(i + 1))
        return 1 + runFrom(i + 1, [this](size_t j) { return letter(j); });
      if ((n = runFrom(i, [this](size_t j) { return letter(j); }))) return n;
      // \p{N}{1,3} or \p{N}
      const size_t digits = pattern_ == SplitPattern::Llama3 ? 3 : 1;
      if ((n = runFrom(i, [this](size_t j) { return number(j); }, digits))) return n;
      // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
      if ((n = optionalSpaceThen(i, [this](size_t j) { return other(j); })))
        return n + runFrom(i + n, [this](size_t j) { return newline(j); });
      // \s*[\r\n]+: the whitespace run up to and including its last \r or \n
      const size_t run = runFrom(i, [this](size_t j) { return space(j); });
      for (size_t k = run; k > 0; --k)
        if (newline(i + k - 1)) return k;
    }
    // \s+(?!\S) then \s+: a run followed by a non-space gives up its last code point, unless that
    // is all it has.
    const size_t run = runFrom(i, [this](size_t j) { return space(j); });
    if (run == 0) return 1;  // unreachable: every code point is a space, letter, number or other
    if (!has(i + run) || run == 1) return run;
    return run - 1;
  }

  // 's|'t|'re|'ve|'m|'ll|'d, optionally ASCII case-insensitive.
  size_t contraction(size_t i, bool anyCase) const {
    if (at(i) != '\'') return 0;
    auto is = [&](size_t j, char c) {
      const char32_t v = at(j);
      return v == static_cast<char32_t>(c) || (anyCase && v == static_cast<char32_t>(c - 'a' + 'A'));
    };
    if (is(i + 1, 's') || is(i + 1, 't') || is(i + 1, 'm') || is(i + 1, 'd')) return 2;
    if ((is(i + 1, 'r') || is(i + 1, 'v')) && is(i + 2, 'e')) return 3;
    if (is(i + 1, 'l') && is(i + 2, 'l')) return 3;
    return 0;
  }

  // ' ?X+' : a space (U+0020) is taken only when at least one X follows it.
  template <class Pred>
  size_t optionalSpaceThen(size_t i, Pred pred) const {
    if (at(i) == ' ' && pred(i + 1)) return 1 + runFrom(i + 1, pred);
    return runFrom(i, pred);
  }

  SplitPattern pattern_;
  std::vector<CodePoint> cps_;
};

}  // namespace

bool splitPatternFromRegex(const std::string& regex, SplitPattern& out) {
  static const std::string gpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  static const std::string llama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static const std::string qwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  if (regex == gpt2) out = SplitPattern::Gpt2;
  else if (regex == llama3) out = SplitPattern::Llama3;
  else if (regex == qwen2) out = SplitPattern::Qwen2;
  else return false;
  return true;
}

void splitByPattern(SplitPattern pattern, std::string_view text, std::vector<std::string_view>& pieces) {
  Matcher(pattern, text).split(text, pieces);
}

void splitDigits(std::string_view text, std::vector<std::string_view>& pieces) {
  size_t start = 0;
  for (const CodePoint& cp : decodeCodePoints(text)) {
    if (!isNumber(cp.value)) continue;
    if (cp.offset > start) pieces.push_back(text.substr(start, cp.offset - start));
    pieces.push_back(text.substr(cp.offset, cp.length));
    start = cp.offset + cp.length;
  }
  if (start < text.size()) pieces.push_back(text.substr(start));
}

}  // namespace attnlab
