// Pair counts are kept for the distinct pieces of the text weighted by how often each occurs;
// after a merge only the pieces that held the pair are recounted. The next pair comes from a
// max-heap whose stale entries (a count that has changed since) are skipped, ties broken by the
// smaller pair of ids so that the result never depends on hash order.
#include "tokenizer/bpe_trainer.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core/utf8.h"
#include "tokenizer/vocabulary.h"
#include "tokenizer/byte_alphabet.h"
#include "tokenizer/split_pattern.h"
#include "tokenizer/tokenizer_files.h"
#include "tokenizer/unicode_classes.h"

namespace attnlab {
namespace {

using PairKey = uint64_t;
PairKey pairKey(int left, int right) { return (static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right); }
int leftOf(PairKey k) { return static_cast<int>(k >> 32); }
int rightOf(PairKey k) { return static_cast<int>(k & 0xFFFFFFFFu); }

struct Piece {
  std::vector<int> symbols;
  long count = 0;
};

class Learner {
 public:
  explicit Learner(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {
    for (int p = 0; p < static_cast<int>(pieces_.size()); ++p) countPairs(p, +1);
    for (const auto& [key, count] : counts_) heap_.push({count, key});
  }

  // The most frequent pair still occurring at least twice; false when none is left.
  bool best(PairKey& key) {
    while (!heap_.empty()) {
      const Entry top = heap_.top();
      heap_.pop();
      const auto it = counts_.find(top.key);
      if (it == counts_.end() || it->second != top.count) continue;  // stale
      if (top.count < 2) return false;
      key = top.key;
      return true;
    }
    return false;
  }

  void merge(PairKey key, int merged) {
    const auto where = std::move(where_[key]);
    where_.erase(key);
    const int left = leftOf(key), right = rightOf(key);
    std::unordered_set<PairKey> touched;
    for (int p : where) {
      std::vector<int>& s = pieces_[p].symbols;
      bool holds = false;
      for (size_t i = 0; i + 1 < s.size() && !holds; ++i) holds = s[i] == left && s[i + 1] == right;
      if (!holds) continue;  // listed for a pair it no longer has
      countPairs(p, -1, &touched);
      std::vector<int> out;
      out.reserve(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == left && s[i + 1] == right) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(s[i]);
        }
      }
      s.swap(out);
      countPairs(p, +1, &touched);
    }
    for (PairKey k : touched) {
      const auto it = counts_.find(k);
      if (it != counts_.end()) heap_.push({it->second, k});
    }
  }

 private:
  struct Entry {
    long count;
    PairKey key;
    bool operator<(const Entry& o) const { return count != o.count ? count < o.count : key > o.key; }
  };

  void countPairs(int p, int sign, std::unordered_set<PairKey>* touched = nullptr) {
    const Piece& piece = pieces_[p];
    for (size_t i = 0; i + 1 < piece.symbols.size(); ++i) {
      const PairKey k = pairKey(piece.symbols[i], piece.symbols[i + 1]);
      long& c = counts_[k];
      c += sign * piece.count;
      if (sign > 0) where_[k].push_back(p);
      if (c == 0) counts_.erase(k);
      if (touched) touched->insert(k);
    }
  }

  std::vector<Piece> pieces_;
  std::unordered_map<PairKey, long> counts_;
  std::unordered_map<PairKey, std::vector<int>> where_;  // pieces that held the pair (may be stale)
  std::priority_queue<Entry> heap_;
};

}  // namespace

std::string learnByteLevelBpe(std::string_view text, int vocabSize, TokenizerSpec& spec) {
  if (vocabSize <= kByteTokens || vocabSize > 1'000'000)
    return "a byte-level BPE needs a vocabulary of more than " + std::to_string(kByteTokens) + " tokens (got " +
           std::to_string(vocabSize) + ")";
  if (const size_t bad = firstInvalidUtf8(text); bad != std::string::npos)
    return "the text is not valid UTF-8 (invalid byte at offset " + std::to_string(bad) + ")";

  spec = TokenizerSpec();
  spec.kind = "byte_level_bpe";
  spec.steps = {{PreTokenizeStep::Kind::Pattern, SplitPattern::Gpt2}};
  for (int b = 0; b < kByteTokens; ++b) spec.vocab.push_back(encodeCodePoint(byteToCodePoint(static_cast<unsigned char>(b))));

  std::vector<std::string_view> views;
  splitByPattern(SplitPattern::Gpt2, text, views);
  std::unordered_map<std::string_view, long> distinct;
  for (std::string_view v : views) ++distinct[v];
  std::vector<std::pair<std::string_view, long>> sorted(distinct.begin(), distinct.end());
  std::sort(sorted.begin(), sorted.end());  // piece order fixed, so the learned merges are too
  std::vector<Piece> pieces;
  for (const auto& [v, count] : sorted) {
    Piece piece{{}, count};
    for (char c : v) piece.symbols.push_back(static_cast<unsigned char>(c));
    pieces.push_back(std::move(piece));
  }

  Learner learner(std::move(pieces));
  std::unordered_map<std::string, int> ids;
  for (int b = 0; b < kByteTokens; ++b) ids[spec.vocab[b]] = b;
  PairKey key;
  while (static_cast<int>(spec.vocab.size()) < vocabSize && learner.best(key)) {
    const std::string& l = spec.vocab[leftOf(key)];
    const std::string& r = spec.vocab[rightOf(key)];
    const std::string joined = l + r;
    spec.merges.emplace_back(l, r);
    auto [it, fresh] = ids.emplace(joined, static_cast<int>(spec.vocab.size()));
    if (fresh) spec.vocab.push_back(joined);
    learner.merge(key, it->second);
  }
  return {};
}

}  // namespace attnlab

namespace attnlab {

std::string learnSubwordVocabulary(std::string_view text, int vocabSize, Vocabulary& out) {
  TokenizerSpec spec;
  if (std::string why = learnByteLevelBpe(text, vocabSize, spec); !why.empty()) return why;
  spec.source = "the learned BPE";
  std::string error;
  std::shared_ptr<const Tokenizer> tokenizer = makeTokenizer(spec, error);
  if (!tokenizer) return error;
  out = Vocabulary(std::move(tokenizer));
  return {};
}

}  // namespace attnlab
