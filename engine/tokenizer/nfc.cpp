#include "tokenizer/nfc.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "tokenizer/unicode_classes.h"

namespace attnlab {

namespace {

struct CombiningClassRange {
  char32_t first, last;
  int ccc;
};
struct Decomposition {
  char32_t code, first, second;  // second 0: a singleton
  bool composes;
};

#include "tokenizer/unicode_normalization.inc"

// Hangul syllables: S = SBase + (L - LBase) * NCount + (V - VBase) * TCount + (T - TBase).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

struct Tables {
  std::unordered_map<char32_t, const Decomposition*> decomposition;
  std::unordered_map<uint64_t, char32_t> composition;  // (first << 32 | second) -> composite
  Tables() {
    for (const Decomposition& d : kDecompositions) {
      decomposition.emplace(d.code, &d);
      if (d.composes) composition.emplace(uint64_t(d.first) << 32 | d.second, d.code);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

void decompose(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t s = c - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount) out += kTBase + s % kTCount;
    return;
  }
  const auto& map = tables().decomposition;
  const auto it = map.find(c);
  if (it == map.end()) {
    out += c;
    return;
  }
  decompose(it->second->first, out);  // mappings are applied until none is left (full decomposition)
  if (it->second->second) decompose(it->second->second, out);
}

// The primary composite of (a, b), or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto& map = tables().composition;
  const auto it = map.find(uint64_t(a) << 32 | b);
  return it == map.end() ? 0 : it->second;
}

// Stable sort of each run of non-starters by combining class (the canonical ordering algorithm).
void orderMarks(std::u32string& s) {
  for (size_t i = 0; i < s.size();) {
    if (combiningClass(s[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && combiningClass(s[end]) != 0) ++end;
    std::stable_sort(s.begin() + i, s.begin() + end, [](char32_t a, char32_t b) { return combiningClass(a) < combiningClass(b); });
    i = end;
  }
}

// Canonical composition: each character joins the last starter unless a character between them
// has a class as high as its own (it is blocked). A character right after the starter (lastClass
// 0) is never blocked.
void composeAll(std::u32string& s) {
  if (s.empty()) return;
  size_t starter = 0, kept = 1;
  int lastClass = combiningClass(s[0]) == 0 ? 0 : 256;  // a leading mark has no starter to join
  for (size_t i = 1; i < s.size(); ++i) {
    const char32_t c = s[i];
    const int cc = combiningClass(c);
    if (lastClass < cc || lastClass == 0) {
      if (const char32_t composite = compose(s[starter], c)) {
        s[starter] = composite;
        continue;
      }
    }
    if (cc == 0) starter = kept;
    lastClass = cc;
    s[kept++] = c;
  }
  s.resize(kept);
}

}  // namespace

int combiningClass(char32_t c) {
  if (c < 0x300) return 0;
  const auto it = std::upper_bound(std::begin(kCombiningClasses), std::end(kCombiningClasses), c,
                                   [](char32_t v, const CombiningClassRange& r) { return v < r.first; });
  if (it == std::begin(kCombiningClasses)) return 0;
  const CombiningClassRange& r = *(it - 1);
  return c <= r.last ? r.ccc : 0;
}

std::string toNfc(std::string_view utf8) {
  // Below U+0300 nothing decomposes or combines except Latin-1 letters, which are NFC already.
  if (std::all_of(utf8.begin(), utf8.end(), [](char b) { return static_cast<unsigned char>(b) < 0x80; })) return std::string(utf8);
  std::u32string s;
  s.reserve(utf8.size());
  for (const CodePoint& cp : decodeCodePoints(utf8)) decompose(cp.value, s);
  orderMarks(s);
  composeAll(s);
  std::string out;
  out.reserve(utf8.size());
  for (char32_t c : s) out += encodeCodePoint(c);
  return out;
}

}  // namespace attnlab
