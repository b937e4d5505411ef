// The merge loop keeps the symbols as a linked list and the candidate pairs in a min-heap ordered
// by (rank, position): O(n log n) for a word of n symbols, so a 100,000-byte run of spaces is cheap.
// A heap entry is stale when either symbol has changed since it was pushed; it is then skipped.
#include "tokenizer/bpe_merges.h"

#include <queue>

namespace attnlab {

bool BpeMerges::add(int left, int right, int merged) {
  return rules_.emplace(key(left, right), Rule{static_cast<int>(rules_.size()), merged}).second;
}

void BpeMerges::apply(std::vector<int>& symbols) const {
  const int n = static_cast<int>(symbols.size());
  if (n < 2) return;
  std::vector<int> prev(n), next(n);
  for (int i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  struct Candidate {
    int rank, left, right, leftId, rightId;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](int left) {
    if (left < 0 || next[left] < 0) return;
    const int right = next[left];
    if (const Rule* rule = find(symbols[left], symbols[right]))
      heap.push({rule->rank, left, right, symbols[left], symbols[right]});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);

  constexpr int kMerged = -1;  // marks a symbol absorbed into its left neighbour
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (symbols[c.left] != c.leftId || symbols[c.right] != c.rightId || next[c.left] != c.right) continue;
    symbols[c.left] = find(c.leftId, c.rightId)->merged;
    symbols[c.right] = kMerged;
    next[c.left] = next[c.right];
    if (next[c.left] >= 0) prev[next[c.left]] = c.left;
    consider(prev[c.left]);
    consider(c.left);
  }
  int kept = 0;
  for (int i = 0; i >= 0; i = next[i]) symbols[kept++] = symbols[i];
  symbols.resize(kept);
}

}  // namespace attnlab
