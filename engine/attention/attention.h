#pragma once
// How a layer turns per-head queries, keys and values into outputs. The surrounding layer
// (model/attention_layer.h) owns everything shared by all variants: projections (incl. shared
// and grouped K/V), positional rotation and bias, gates, head merge. A variant sees one layer's
// heads at once and writes outputs plus the maps the views draw.
//
// Layouts are head-major and contiguous: q is [B, H, T, d_head], k and v are [B, Hkv, T, d_head]
// (query head h reads KV head h / (H / Hkv)), maps are [B, H, T, T].
// Members register in AttentionRegistry, one file each.
#include <string>
#include <vector>

#include <memory>

#include "attention/precision.h"
#include "attention/recurrent_state.h"
#include "core/random.h"
#include "core/registry.h"
#include "core/settings.h"
#include "config/model_config.h"
#include "core/params.h"

namespace attnlab {

struct AttentionShape {
  int B = 0, T = 0, H = 0, Hkv = 0, dHead = 0;
  int group() const { return H / Hkv; }
  size_t qSize() const { return static_cast<size_t>(B) * H * T * dHead; }
  size_t kvSize() const { return static_cast<size_t>(B) * Hkv * T * dHead; }
  size_t mapSize() const { return static_cast<size_t>(B) * H * T * T; }
};

struct AttentionInputs {
  AttentionShape shape;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const int* positions = nullptr;  // [T] absolute positions of the tokens
  const float* bias = nullptr;     // [H, T, T] positional score bias, or null
  // Hook for the retention gate and presence (as source weight): g_j in (0, 1] per [B, H, T] key
  // (exactly 0 only for presence-coupled variants: an absent source, whose weight must be exactly 0).
  // Each variant applies it as its normalisation requires (softmax: + log g_j; sigmoid: * g_j).
  const float* key_gate = nullptr;
  float scale = 1.0f;  // 1 / sqrt(d_head)
  ScorePrecision precision = ScorePrecision::fp32;  // emulated format of scores and exponentials (attention/precision.h)
};

struct AttentionOutputs {
  float* o = nullptr;        // [B, H, T, d_head]
  float* scores = nullptr;   // [B, H, T, T] scores entering the normalisation; -inf where masked
  float* weights = nullptr;  // [B, H, T, T] a_ij as the variant defines them (0 where masked)
  // A forward without maps (scores and weights null: attendsWithoutMaps) writes per row instead,
  // each [B, H, T]: what its backward recomputes the weights from, and the two figures training
  // reads off the maps (the layer's attention entropy and largest score).
  float* row_log_sum_exp = nullptr;    // L_i = log sum_j exp(z_ij) of the normalised logits z
  float* row_entropy = nullptr;        // -sum_j a_ij log a_ij
  float* row_max_abs_score = nullptr;  // max_j |s_ij| over the visible keys
};

struct AttentionGrads {
  const float* d_o = nullptr;   // in: [B, H, T, d_head]
  float* d_q = nullptr;         // out (=): [B, H, T, d_head]
  float* d_k = nullptr;         // out (=): [B, Hkv, T, d_head]
  float* d_v = nullptr;         // out (=): [B, Hkv, T, d_head]
  float* d_key_gate = nullptr;  // out (=) when inputs.key_gate is set: [B, H, T]
};

// Decoding (engine/kv): one query against the live entries of a KV cache, in cache order. Entries
// may have been evicted, so keys carry their absolute positions.
struct DecodeRowInputs {
  const float* q = nullptr;          // [d_head], after rotation
  const float* k = nullptr;          // [n, d_head] live keys of the query head's KV head
  const float* v = nullptr;          // [n, d_head] their values
  const int* key_positions = nullptr;  // [n]
  const float* bias = nullptr;       // [n] positional score bias, or null
  const float* key_gate = nullptr;   // [n] as AttentionInputs::key_gate, or null
  int n = 0, dHead = 0, head = 0, query_position = 0;
  float scale = 1.0f;
  ScorePrecision precision = ScorePrecision::fp32;
};

class AttentionVariant {
 public:
  virtual ~AttentionVariant() = default;

  virtual std::vector<SettingSpec> settingSpecs() const { return {}; }
  // Reads settings and creates the variant's own parameters under `prefix` (e.g. "blocks.1.attn.").
  virtual std::string configure(const ModelConfig& config, const std::string& prefix, ParamStore& params) = 0;
  virtual void initialise(Rng& /*rng*/) {}

  virtual void forward(const AttentionInputs& in, AttentionOutputs& out) const = 0;
  // True when forward() and backward() can run on these inputs with out.scores and out.weights
  // null, writing and reading the row outputs instead: O(T) memory per head where maps take
  // O(T^2). The layer asks only when no trace or hook wants the maps (training).
  virtual bool attendsWithoutMaps(const AttentionInputs& /*in*/) const { return false; }
  // Uses the forward's saved outputs; accumulates into the variant's own parameter gradients.
  virtual void backward(const AttentionInputs& in, const AttentionOutputs& saved, AttentionGrads& grads) = 0;

  // False for variants whose output is not a function of q.k scores (rotary encodings then do not apply).
  virtual bool usesDotScores() const { return true; }
  // True for presence-coupled variants (OAttention): the layer then computes each token's presence
  // p from its block input (model/gates.h), passes p_j as the key gate (times any retention gate)
  // and multiplies each output o_i by p_i.
  virtual bool needsPresence() const { return false; }
  // False for variants that decode from a constant-size state instead of a growing KV cache
  // (linear attention); kv/kv_bytes.h then counts 0 bytes per token for the layer, and
  // the decoder steps recurrentState() instead.
  virtual bool cachesKeysAndValues() const { return true; }
  // For variants that do not cache keys and values: a fresh decoding state of query head `head`.
  virtual std::unique_ptr<RecurrentState> recurrentState(int /*head*/, int /*dHead*/) const { return nullptr; }
  // Decoding a variant that scores transformed queries and keys (momentum's high-pass): replaces
  // this token's q [H, d_head] and k [Hkv, d_head] (after rotation) in place by what forward() scores
  // with, from the previous token's untransformed ones (empty at position 0). The cache then holds
  // the transformed keys. Returns false (the default) for variants that score q and k as they are.
  virtual bool filterDecodeInputs(std::vector<float>& /*q*/, std::vector<float>& /*k*/, const std::vector<float>& /*previousQ*/,
                                  const std::vector<float>& /*previousK*/) const {
    return false;
  }
  // Row t of forward() computed from a cache: writes o [d_head] and the weights [n] of the live
  // entries. Returns false for variants that do not decode from a KV cache.
  virtual bool decodeRow(const DecodeRowInputs& /*in*/, float* /*o*/, float* /*weights*/) const { return false; }
};

using AttentionRegistry = Registry<AttentionVariant>;

}  // namespace attnlab
