#pragma once
// A decoder-only Transformer: token embedding (+ absolute positions if the encoding adds them),
// N pre-norm blocks (attention, then an MLP unless attention-only, in sequence or in parallel;
// norm and MLP kinds from model/block_parts.h), final norm, output head (tied to the embedding or not). Forward and backward are hand-written (see
// model/ops.h); activations live in a Workspace so a trace can run beside training.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/model_config.h"
#include "core/params.h"
#include "model/trace.h"

namespace attnlab {

struct Workspace;  // activations of one forward pass, kept for its backward (model/workspace.h)
enum class ActivationPass { reading, training };  // what Model::activationBytes counts for
class Block;
class AttentionLayer;

class Model {
 public:
  // Throws std::invalid_argument with a one-line reason when the config cannot be built.
  Model(const ModelConfig& config, uint64_t seed);
  ~Model();

  const ModelConfig& config() const { return config_; }
  ParamStore& params() { return params_; }
  const ParamStore& params() const { return params_; }

  // Runs tokens [B, T] (T <= context). Returns the mean cross-entropy over positions whose
  // target is not -1 (0 when there are none), plus the layers' auxiliary losses (the retention
  // gate's sparsity term, when model.retention_sparsity > 0). Logits stay in `ws` for metrics.
  // With `trace` non-null, captures every map for batch element 0.
  double forward(Workspace& ws, const int* tokens, const int* targets, int B, int T, Trace* trace = nullptr) const;
  // Accumulates d(loss)/d(param) for the last forward on `ws` into params().grad.
  void backward(Workspace& ws);

  // Per-layer mean attention entropy (nats) over the last forward's rows.
  std::vector<double> layerEntropy(const Workspace& ws) const;
  // Parameter names belonging to block `layer` (for per-layer gradient norms).
  bool belongsToLayer(const std::string& paramName, int layer) const;

  // The final norm and output head on residual rows [N, d_model], the arithmetic forward() applies
  // after the last block (the logit lens reads every layer's residual through it).
  void unembed(const Mat& residual, Mat& logits) const;

  // Decoding one token at a time (engine/kv/decoder.h): runs `token` at absolute position `pos`
  // through embeddings, blocks and head, with `attention(layer, xNorm, h, y)` computing each block's
  // attention output y [1, d_model] from its normalised input xNorm and block input h (over a cache).
  // Writes logits [1, vocab].
  using DecodeAttention = std::function<void(int layer, const Mat& xNorm, const Mat& h, Mat& y)>;
  void decodeToken(int token, int pos, const DecodeAttention& attention, Mat& logits) const;
  const AttentionLayer& attentionLayer(int layer) const;

  // Head mask hook (head importance, analysis/head_importance.h): gains[layer][head] scale each head's output
  // (0 ablates it); an empty list switches the hook off (the default, at no cost). Setting clears
  // the accumulated d(loss)/d(gain), which every backward() adds to while the gains are set (set
  // them before the forward pass whose backward should see them).
  void setHeadGains(const std::vector<std::vector<float>>& gains);
  std::vector<std::vector<double>> headGainGradients() const;

  // Bytes of activations a forward+backward at [B, T] needs (the memory estimate shown before
  // training). A training pass keeps no maps in the layers that can do without them (their
  // variants' O(T) row figures instead); a reading pass (traces, analyses) keeps them all.
  size_t activationBytes(int B, int T, ActivationPass pass = ActivationPass::reading) const;

  // A model of names and shapes only, nothing allocated: for counting parameters and activations
  // of a configuration of any size (planning a run elsewhere, or the estimate before training).
  // It must not run. Throws std::invalid_argument as the constructor does.
  static std::unique_ptr<const Model> shapesOf(const ModelConfig& config);

 private:
  struct Uninitialised {};
  Model(const ModelConfig& config, Uninitialised, Allocation allocation = Allocation::ValuesAndGrads);  // values zero
  void initialise(uint64_t seed);
  friend std::unique_ptr<Model> copyModel(const Model& model);
  friend std::unique_ptr<Model> copyModelAs(const Model& model, const ModelConfig& config);
// A model whose parameters are all zero, with no random draw: to be filled from files (engine/hf).
// Throws std::invalid_argument as the constructor does.
std::unique_ptr<Model> makeBlankModel(const ModelConfig& config);
  friend std::unique_ptr<Model> makeBlankModel(const ModelConfig& config);

  ModelConfig config_;
  ParamStore params_;
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// An independent model with the same config and parameter values (no gradient buffers until a
// backward or zeroGrad, head gains off):
// what a trainer hands to views and analyses so they can work on it while training goes on.
std::unique_ptr<Model> copyModel(const Model& model);
// A model of `config` (the same shape with other layer variants, e.g. QK-guard's switch to qk_norm)
// holding `model`'s value for every parameter of the same name and shape; the others are zero for
// the caller to set. Throws std::invalid_argument as the constructor does.
std::unique_ptr<Model> copyModelAs(const Model& model, const ModelConfig& config);
// A model whose parameters are all zero, with no random draw and no gradient buffers (until a
// backward or zeroGrad): to be filled from files (engine/hf). Throws std::invalid_argument as the
// constructor does.
std::unique_ptr<Model> makeBlankModel(const ModelConfig& config);

// Model::activationBytes without building the model (estimates before loading one).
size_t activationBytes(const ModelConfig& config, int B, int T, ActivationPass pass = ActivationPass::reading);

std::unique_ptr<Workspace> makeWorkspace();
// Logits [B*T, vocab] of the last forward on `ws`.
const Mat& workspaceLogits(const Workspace& ws);

}  // namespace attnlab
