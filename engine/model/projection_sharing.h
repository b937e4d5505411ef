#pragma once
// Projection sharing: which of the query, key and value projections are one weight.
//   "qkv"    standard: wq, wk, wv;
//   "q_k=v"  keys and values share one projection (wkv); one cached tensor per token;
//   "q=k_v"  queries and keys share one projection (wqk): scores are symmetric before masking;
//   "q=k=v"  a single projection (wqkv);
//   "latent" latent KV (multi-head latent attention, MLA): c = W_DKV x (wdkv, d_c = model.kv_latent_dim), k = W_UK c
//            (wuk), v = W_UV c (wuv); the decoding cache holds c only, 4 d_c bytes per token and
//            layer, and expands keys and values from it. No rotary encoding: a rotation R_j between
//            q and W_UK breaks the absorbed form q^T W_UK c (MLA's decoupled rope key is not built).
// Combined with grouped KV heads (Hkv < H), the key projection has Hkv heads. When queries are
// keys, query head h is its group's key head h / (H / Hkv) (sharing per group), so scores stay
// symmetric and the heads of a group differ only through per-head positional bias and
// per-head parameters of the variant.
#include <optional>
#include <string>
#include <vector>

#include "config/model_config.h"

namespace attnlab {

struct ProjectionSharing {
  bool queryIsKey = false;  // q = k (before rotation, which turns both alike)
  bool valueIsKey = false;  // v = k before rotation and gates
  bool latent = false;      // k and v are up-projections of one cached latent c = W_DKV x
};

constexpr const char* kProjectionSharingNames = "qkv, q_k=v, q=k_v, q=k=v, latent";
std::optional<ProjectionSharing> projectionSharingOf(const std::string& name);

// Each mode with its one-line rule, in kProjectionSharingNames order, for pickers and listings.
struct ProjectionSharingInfo {
  std::string name;
  std::string summary;
};
const std::vector<ProjectionSharingInfo>& projectionSharingCatalogue();

// "" when the latent-KV settings of `config` can be built (or it has none), else one line saying why.
std::string validateLatentKv(const ModelConfig& config);

}  // namespace attnlab
