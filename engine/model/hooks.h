#pragma once
// Named hook points: every activation a forward pass computes that the causal analyses
// (engine/interpret/) read or replace, named as TransformerLens names them ("blocks.3.attn.pattern").
// A caller sets Workspace::hooks before Model::forward; each site then hands its tensor to the hook,
// which may read it or overwrite rows in place before the pass goes on. With no hook set each site
// costs one null-pointer test.
#include <string>
#include <vector>

#include "core/tensor.h"
#include "config/model_config.h"

namespace attnlab {

enum class HookSite {
  resid_pre,      // blocks.L.resid_pre      [T, d_model] residual stream entering block L
  attn_q,         // blocks.L.attn.q         [H, T, d_head] queries after positional rotation
  attn_k,         // blocks.L.attn.k         [Hkv, T, d_head] keys after rotation
  attn_v,         // blocks.L.attn.v         [Hkv, T, d_head] values after the value gate and rotation
  attn_pattern,   // blocks.L.attn.pattern   [H, T, T] attention weights (row = query position)
  attn_head_out,  // blocks.L.attn.head_out  [T, H, d_head] each head's output before W_O (after gates)
  attn_out,       // blocks.L.attn_out       [T, d_model] the attention layer's output
  resid_mid,      // blocks.L.resid_mid      [T, d_model] after attention, before the MLP
  mlp_hidden,     // blocks.L.mlp.hidden     [T, d_ff] the MLP's activations
  mlp_out,        // blocks.L.mlp.out        [T, d_model] the MLP's output
  resid_post,     // blocks.L.resid_post     [T, d_model] leaving block L
  ln_f_out,       // ln_f.out                [T, d_model] the final norm's output (layer -1)
};

// One activation as a hook sees it: B batch elements of T positions, `heads` heads of `width`
// floats each (heads = 1 for whole-stream sites). Head-major sites keep each head's [T, width]
// block contiguous; token-row sites keep each position's heads side by side.
struct Activation {
  HookSite site;
  int layer;
  float* data;
  int B, T, heads, width;
  bool headMajor;
  float* row(int b, int head, int t) const {
    const size_t r = headMajor ? (static_cast<size_t>(b) * heads + head) * T + t : (static_cast<size_t>(b) * T + t) * heads + head;
    return data + r * width;
  }
  size_t size() const { return static_cast<size_t>(B) * T * heads * width; }
};

class ForwardHooks {
 public:
  virtual ~ForwardHooks() = default;
  // Sites the hook does not want are skipped (the pattern site then copies nothing).
  virtual bool wants(HookSite site, int layer) const = 0;
  // Reads or overwrites the activation in place.
  virtual void at(const Activation& activation) = 0;
};

// Calls the hook on a token-row matrix [B*T, heads*width] when one is set and wants the site.
inline void hookRows(ForwardHooks* hooks, HookSite site, int layer, Mat& rows, int B, int T, int heads = 1) {
  if (!hooks || !hooks->wants(site, layer)) return;
  hooks->at({site, layer, rows.data(), B, T, heads, static_cast<int>(rows.cols()) / heads, false});
}
// The same for a head-major buffer [B, heads, T, width].
inline void hookHeads(ForwardHooks* hooks, HookSite site, int layer, std::vector<float>& data, int B, int T, int heads) {
  if (!hooks || !hooks->wants(site, layer)) return;
  hooks->at({site, layer, data.data(), B, T, heads, static_cast<int>(data.size() / (static_cast<size_t>(B) * T * heads)), true});
}

// "blocks.2.attn.pattern", "ln_f.out".
std::string hookName(HookSite site, int layer);
// Parses a hook name; false when it names no site of `config`.
bool parseHookName(const std::string& name, const ModelConfig& config, HookSite& site, int& layer);
// Every hook point of a model of `config`, in forward order.
std::vector<std::string> hookNames(const ModelConfig& config);
// What one site holds, for listings: "[T, d_model] residual stream entering the block".
std::string hookDescription(HookSite site);

}  // namespace attnlab
