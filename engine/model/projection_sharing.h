#pragma once
// A9 projection sharing: which of the query, key and value projections are one weight.
//   "qkv"    standard: wq, wk, wv;
//   "q_k=v"  keys and values share one projection (wkv); one cached tensor per token;
//   "q=k_v"  queries and keys share one projection (wqk): scores are symmetric before masking;
//   "q=k=v"  a single projection (wqkv).
// Combined with grouped KV heads (Hkv < H), the key projection has Hkv heads. When queries are
// keys, query head h is its group's key head h / (H / Hkv) (sharing per group), so scores stay
// symmetric and the heads of a group differ only through per-head positional bias and
// per-head parameters of the variant.
#include <optional>
#include <string>
#include <vector>

namespace attnlab {

struct ProjectionSharing {
  bool queryIsKey = false;  // q = k (before rotation, which turns both alike)
  bool valueIsKey = false;  // v = k before rotation and gates
};

constexpr const char* kProjectionSharingNames = "qkv, q_k=v, q=k_v, q=k=v";
std::optional<ProjectionSharing> projectionSharingOf(const std::string& name);

// Each mode with its one-line rule, in kProjectionSharingNames order, for pickers and listings.
struct ProjectionSharingInfo {
  std::string name;
  std::string summary;
};
const std::vector<ProjectionSharingInfo>& projectionSharingCatalogue();

}  // namespace attnlab
