#pragma once
// One block's attention: projections (shared per model/projection_sharing.h, with grouped K/V
// heads), positional rotation and score bias, the layer's variant, the shared gates around it
// (model/gates.h: value gate, retention and presence as key gates, receiver presence, output
// gate), head merge and output projection. Forward beside backward.
#include <memory>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention/presence.h"
#include "core/random.h"
#include "core/tensor.h"
#include "config/model_config.h"
#include "model/gates.h"
#include "model/hooks.h"
#include "core/params.h"
#include "model/trace.h"
#include "positional/positional.h"

namespace attnlab {

// Activations of one attention layer for one forward pass.
struct AttentionActs {
  AttentionShape shape;
  const int* tokens = nullptr;          // [B*T] token ids, set by the model (token-indexed rotations read them)
  ForwardHooks* hooks = nullptr;        // the forward's hook points (model/hooks.h), set by the model
  Mat q_flat, k_flat, v_flat;           // [B*T, heads*d_head] projections before rotation (q_flat, v_flat unused when shared with k)
  Mat latent;                           // [B*T, d_c] latent KV c = W_DKV x (empty without)
  std::vector<float> q, k, v;           // head-major, after rotation
  Mat angles;                           // [B*T, pairs] rotary angles (empty without rotation)
  std::vector<float> bias;              // [H, T, T] positional score bias (empty without)
  std::vector<float> scores, weights;   // [B, H, T, T], empty when the pass attended without maps
  // Set by the model: true lets a variant that can (AttentionVariant::attendsWithoutMaps) attend
  // without maps, keeping instead the row figures below, each [B, H, T] (attention.h).
  bool maps_optional = false;
  bool attended_without_maps = false;   // set by forward()
  std::vector<float> row_log_sum_exp, row_entropy, row_max_abs_score;
  std::vector<float> o;                 // head-major output
  Mat o_flat;                           // [B*T, H*d_head] what the output projection reads
  std::vector<float> v_gated;           // values after the value gate, before any rotation
  std::vector<float> presence;          // [B*T] presence p, when the variant needs it
  std::vector<float> retention;         // [B, H, T] retention gate g, when enabled
  std::vector<float> key_gate;          // [B, H, T] the key gate the variant received (g * p), or empty
  Mat o_ungated;                        // [B*T, H*d_head] o_flat before receiver presence and output gate
  Mat out_gate;                         // [B*T, H*d_head] or [B*T, H] output gate values
  Mat o_before_head_gains;              // o_flat before the head gains (only while gains are set)
  // Cross-layer KV (model/cross_layer_kv.h): a reader's pointer to its source layer's activations,
  // set by the model; and on a source, the gradients wrt its k, v its readers' backward sent.
  AttentionActs* kv_source = nullptr;
  std::vector<float> dk_from_readers, dv_from_readers;
};

// One token's share of decoding (engine/kv/decoder.h): row t of forward()'s intermediate values.
struct DecodeToken {
  int position = 0;
  std::vector<float> q;          // [H, d_head] after rotation
  std::vector<float> k, v;       // [Hkv, d_head] after value gate and rotation
  std::vector<float> latent;     // [d_c] latent KV c = W_DKV x, what the cache holds (empty without)
  std::vector<float> retention;  // [H] retention gate g of this token as a key, or empty
  float presence = 1.0f;         // presence p of this token (1 when the variant has none)
  Mat angles;                    // [1, pairs] rotary angles, empty without rotation
};

class AttentionLayer {
 public:
  // Throws std::invalid_argument on a bad variant name or setting.
  AttentionLayer(const ModelConfig& config, int layer, const PositionalEncoding& positional, ParamStore& params);
  ~AttentionLayer();
  void initialise(Rng& rng, float residualStd);

  const std::string& variantName() const { return variantName_; }
  // x is the normalised input (LN1 of the block input), h the block input itself (the residual
  // stream: presence reads it). Returns the layer's auxiliary loss (retention sparsity, else 0),
  // which the model adds to its loss.
  double forward(const Mat& x, const Mat& h, const int* pos, int B, int T, AttentionActs& acts, Mat& y) const;
  // dx (=) gradient wrt x; dh (+=) gradient wrt h through presence (dh may be the same matrix as
  // dy, which is read first). Includes the auxiliary loss's gradient; accumulates parameter gradients.
  void backward(const Mat& x, const Mat& h, const Mat& dy, const int* pos, int B, int T, AttentionActs& acts, Mat& dx,
                Mat& dh);
  // --- Decoding one token at a time (engine/kv), the same arithmetic as one row of forward() ---
  const AttentionVariant& variant() const { return *variant_; }
  const PositionalEncoding& positional() const { return positional_; }
  int layer() const { return layer_; }
  float scoreScale() const;
  ScorePrecision precision() const { return precision_; }
  bool rotary() const;
  bool hasKeyGate() const { return retention_ || presenceTau_ > 0; }
  // Whether a training pass of this layer keeps no T x T maps: its variant attends without them
  // at the layer's precision and gates (AttentionVariant::attendsWithoutMaps).
  bool trainsWithoutMaps() const;
  // x [1, d_model] the token's normalised input, h its block input. angleSum carries the running
  // angles of accumulating rotations across calls ([pairs], zero before the first token).
  void decodeToken(const Mat& x, const Mat& h, int token, int pos, std::vector<double>& angleSum, DecodeToken& out) const;
  // Cross-layer KV (model/cross_layer_kv.h): the layer whose keys and values this one attends over
  // (itself unless it is a reader of a group); a reader computes no k, v of its own.
  int kvSource() const { return kvSource_; }
  bool readsSharedKv() const { return kvSource_ != layer_; }
  // Latent KV (model/projection_sharing.h): the width d_c of the latent, 0 without.
  int latentDim() const;
  // Keys and values [n, Hkv*d_head] (values after the value gate) of n cached latents [n, d_c], as
  // forward() computes them from c: the decoder reads these in place of stored rows.
  void expandLatents(const float* latents, int n, Mat& keys, Mat& values) const;
  // oHeads [1, H*d_head] the heads' outputs for the token; y [1, d_model] the layer's output.
  void decodeOutput(const Mat& x, const DecodeToken& token, Mat& oHeads, Mat& y) const;
  // Copies batch element 0's maps, q, k, v, gates and presence into `trace`.
  void capture(const AttentionActs& acts, LayerTrace& trace) const;

  // Head mask hook (analysis/head_importance.h): gain g_h scales head h's output before the output
  // projection (0 ablates the head). Empty, the default, switches it off at no cost. While set,
  // backward() adds d(loss)/d(g_h) to headGainGradient(); setting the gains clears it.
  void setHeadGains(std::vector<float> gains);
  const std::vector<double>& headGainGradient() const { return headGainGrad_; }

 private:
  int layer_, H_, Hkv_, dHead_;
  int kvSource_;  // cross-layer KV: the group's first layer (layer_ itself when not a reader)
  std::string variantName_;
  const PositionalEncoding& positional_;
  std::unique_ptr<AttentionVariant> variant_;
  // wk_ is the key projection under the name sharing gives it (wk, wkv, wqk, wqkv); wq_ is null
  // when queries are keys, wv_ when values are keys.
  // With latent KV, wk_ and wv_ are the up-projections W_UK, W_UV and read the latent of wdkv_.
  Param *wq_ = nullptr, *wk_ = nullptr, *wv_ = nullptr, *wo_ = nullptr, *wdkv_ = nullptr;
  Param *bq_ = nullptr, *bk_ = nullptr, *bv_ = nullptr, *bo_ = nullptr;  // model.qkv_bias, model.out_bias
  bool valueGate_ = false;
  bool rowStable_ = false;   // presence-coupled variants promise bitwise contracts (model/row_stable.h)
  float presenceTau_ = 0;    // > 0 when the variant needs presence
  std::unique_ptr<OutputGate> outputGate_;
  std::unique_ptr<RetentionGate> retention_;
  std::vector<float> headGains_;      // [H] or empty (off)
  std::vector<double> headGainGrad_;  // [H] d(loss)/d(gain), accumulated by backward()

  void project(const Mat& in, const Param& W, const Param* b, Mat& out) const;
  void addLatentParams(const ModelConfig& config, const std::string& prefix, ParamStore& params);
  // From k_flat = c W_UK^T, v_flat = c W_UV^T, c = x W_DKV^T: assigns dx from the heads' dK, dV.
  void latentBackward(const std::vector<float>& dK, const std::vector<float>& dV, const Mat& x, const AttentionActs& a,
                      int B, int T, Mat& dx);
  // Cross-layer KV (cross_layer_kv.cpp): a reader's k, v from its source; its dK, dV sent back; a
  // source adding what its readers sent to its own dK, dV.
  void readSourceKv(AttentionActs& a) const;
  void sendKvGradsToSource(const std::vector<float>& dK, const std::vector<float>& dV, AttentionActs& a) const;
  void addReadersKvGrads(AttentionActs& a, std::vector<float>& dK, std::vector<float>& dV) const;
  double keyGateForward(const Mat& x, const Mat& h, int B, int T, AttentionActs& a) const;
  void keyGateBackward(const Mat& x, const AttentionActs& a, const std::vector<float>& dKeyGate, int B, int T, Mat& dx,
                       std::vector<float>& dPresence);
  void gateOutputs(const Mat& x, AttentionActs& a) const;
  void gateOutputsBackward(const Mat& x, const AttentionActs& a, Mat& dOFlat, Mat& dx, std::vector<float>& dPresence);
  ScorePrecision precision_ = ScorePrecision::fp32;
};

// The pattern hook point (model/attention_hooks.cpp): hands the weights to the hook and, for each
// head whose weights the hook changed, recomputes its output as the weighted sum of its values.
void hookPattern(ForwardHooks* hooks, int layer, const std::string& variant, AttentionActs& acts);

// [B*T, heads*d] (token rows) <-> [B, heads, T, d] (head-major blocks).
void splitHeads(const Mat& flat, int B, int T, int heads, int d, std::vector<float>& out);
void mergeHeads(const float* headMajor, int B, int T, int heads, int d, Mat& flat);

}  // namespace attnlab
