#pragma once
// Everything that defines an experiment: the model's shape and parts, the task, and training.
// Serialised to config.json by io/config_json.h; validated by validate().
#include <cstdint>
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
  std::string projection_sharing = "qkv";  // A9: "qkv", "q_k=v", "q=k_v", "q=k=v" or "latent" (model/projection_sharing.h)
  int kv_latent_dim = 0;                   // A16 latent KV (projection_sharing "latent"): d_c; 0 means d_model / 4
  int kv_share_group = 1;                  // A16 cross-layer KV: groups of G layers read their first layer's K/V (0 or 1 = off; model/cross_layer_kv.h)
  std::string output_gate = "none";        // G2: "none", "elementwise" or "headwise" (model/gates.h)
  bool value_gate = false;                 // G4: v <- sigmoid(v)
  bool retention_gate = false;             // G1: soft per-key gate g = sigmoid(w.x + c) per head
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
};

struct TaskConfig {
  std::string name = "toy_language";
  Settings settings;      // task-specific (e.g. pairs, modulus, length_multiplier)
  std::string text_path;  // for the "text" task: a UTF-8 file, character level
  // For "text": a folder whose tokenizer files (tokenizer.json, or vocab.json + merges.txt) encode
  // the file, as fine-tuning a pretrained model needs (hf/hf_finetune.h). Such a model keeps its
  // own sizes: the lab's caps on the models it builds do not apply.
  std::string tokenizer;
  int seq_len = 0;        // 0 means the model's context
};

struct TrainConfig {
  int steps = 1000;
  int batch = 16;
  double lr = 3e-3;
  double min_lr_ratio = 0.1;  // cosine decays to lr * min_lr_ratio
  int warmup = 50;
  double weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.98;
  double eps = 1e-8;
  double grad_clip = 1.0;  // 0 disables clipping
  uint64_t seed = 1;
  int threads = 2;
  int eval_every = 100;  // steps between validation evaluations (0: only at the end)
  int eval_batches = 4;
  // Separate learning rates for the two attention circuits (seeds 000, 004; train/circuit_lr.h):
  // W_q, W_k (QK) and W_v, W_o (OV) of the layers listed ("" = all, else e.g. "1,2") step at
  // lr x ratio during steps [from, until) (until 0 = to the end). Ratios 1 are the baseline, bit for bit.
  double qk_lr_ratio = 1.0;
  double ov_lr_ratio = 1.0;
  std::string lr_ratio_layers;
  int lr_ratio_from = 0;
  int lr_ratio_until = 0;
  // QK-guard (train/qk_guard.h): a softmax layer whose largest |score| exceeds this switches to qk_norm (0: off).
  double qk_guard = 0;
};

struct ExperimentConfig {
  std::string name = "default";
  std::string description;
  ModelConfig model;
  TaskConfig task;
  TrainConfig train;
};

// Returns "" when the configuration can be built, else one line saying what is wrong and why
// (checks shapes, registry names and each member's settings).
std::string validate(const ExperimentConfig& config);

}  // namespace attnlab
