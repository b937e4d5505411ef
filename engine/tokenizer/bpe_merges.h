#pragma once
// The merge table of a BPE model and the merge loop: the adjacent pair of lowest rank is merged
// first, the leftmost of equal ranks first, until no adjacent pair has a merge.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlab {

class BpeMerges {
 public:
  // Rank = position in the merges list. Returns false when `merged` already has a rule for the pair.
  bool add(int left, int right, int merged);
  size_t size() const { return rules_.size(); }
  // Rewrites `symbols` (token ids) in place.
  void apply(std::vector<int>& symbols) const;

 private:
  struct Rule {
    int rank;
    int merged;
  };
  static uint64_t key(int left, int right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  const Rule* find(int left, int right) const {
    const auto it = rules_.find(key(left, right));
    return it == rules_.end() ? nullptr : &it->second;
  }
  std::unordered_map<uint64_t, Rule> rules_;
};

}  // namespace attnlab
