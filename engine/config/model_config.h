#pragma once
// The model's shape and parts: what the engine builds (model/model.h) and every layer below it reads.
// A ground type: it names registry members by string and includes nothing of theirs.
#include <string>
#include <vector>

#include "core/settings.h"

namespace attnlab {

struct ModelConfig {
  int vocab = 0;  // filled from the task's vocabulary when 0
  int d_model = 128;
  int n_layers = 4;
  int n_heads = 4;
  int n_kv_heads = 0;  // 0 means n_heads (no grouping); must divide n_heads
  int d_ff = 512;
  int context = 128;
  bool attention_only = false;  // blocks without the MLP
  bool tied_embeddings = true;  // output head reuses the token embedding
  // Attention variant per layer: one name for all layers, or exactly n_layers names.
  std::vector<std::string> attention = {"softmax"};
  Settings attention_settings;  // e.g. temperature, window
  std::string positional = "learned";
  Settings positional_settings;  // e.g. theta, rotary_fraction
  std::string projection_sharing = "qkv";  // projection sharing: "qkv", "q_k=v", "q=k_v", "q=k=v" or "latent" (model/projection_sharing.h)
  int kv_latent_dim = 0;                   // latent KV (projection_sharing "latent"): d_c; 0 means d_model / 4
  int kv_share_group = 1;                  // cross-layer KV: groups of G layers read their first layer's K/V (0 or 1 = off; model/cross_layer_kv.h)
  std::string output_gate = "none";        // output gate: "none", "elementwise" or "headwise" (model/gates.h)
  bool value_gate = false;                 // value gate: v <- sigmoid(v)
  bool retention_gate = false;             // retention gate: soft per-key gate g = sigmoid(w.x + c) per head
  double retention_sparsity = 0.0;         // lambda: the loss adds lambda * mean(g) over layers, heads, keys
  std::string score_precision = "fp32";
  // Block parts as pretrained models have them (model/block_parts.h); the defaults are GPT-2's.
  std::string norm = "layernorm";  // "layernorm", "layernorm_no_bias" or "rmsnorm"
  double norm_eps = 1e-5;
  std::string mlp = "gelu";        // "gelu" (tanh approximation), "gelu_erf" or "swiglu"
  bool mlp_bias = true;
  bool qkv_bias = false;           // biases on the query, key and value projections
  bool out_bias = false;           // bias on the attention output projection
  bool parallel_residual = false;  // x + attn(ln1(x)) + mlp(ln2(x)) in one step (GPT-NeoX)

  int headDim() const { return n_heads > 0 ? d_model / n_heads : 0; }
  int kvHeads() const { return n_kv_heads > 0 ? n_kv_heads : n_heads; }
  int latentDim() const { return kv_latent_dim > 0 ? kv_latent_dim : d_model / 4; }
  // The layer whose keys and values `layer` attends over: the first of its group (itself without sharing).
  int kvSourceOf(int layer) const { return kv_share_group > 1 ? layer - layer % kv_share_group : layer; }
  const std::string& attentionOf(int layer) const { return attention.size() == 1 ? attention[0] : attention.at(layer); }
  bool operator==(const ModelConfig&) const = default;  // every field equal: the same model
};

}  // namespace attnlab
