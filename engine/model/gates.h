#pragma once
// The gates an attention layer applies around its variant (catalogue section 3). One shared
// implementation each, whatever the variant:
//   retention:    g_j = sigmoid(w_h . x_j + c_h) per key and head, a soft multiplier on key j's
//                 contribution (handed to the variant as its key gate); the loss adds
//                 lambda * mean(g) so that the model learns to keep few keys;
//   output:       o_i <- o_i * sigmoid(W_g x_i + b_g), element-wise or one scalar per head;
//   presence:     in attention/presence.h, beside the variants that use it (OAttention);
//   value:        v_j <- sigmoid(v_j) (sigmoid-value detector heads).
// x is the layer's normalised input, [B*T, d_model] token rows. Forward beside backward; backward
// functions accumulate (+=) into parameter gradients and into dx.
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/settings.h"
#include "core/tensor.h"
#include "core/params.h"

namespace attnlab {

// ---- output gate ----------------------------------------------------------------------------

enum class OutputGateKind { none, elementwise, headwise };
constexpr const char* kOutputGateNames = "none, elementwise, headwise";
std::optional<OutputGateKind> outputGateKindOf(const std::string& name);

class OutputGate {
 public:
  // Creates "<prefix>gate.weight" [H*d_head, d] (element-wise) or [H, d] (head-wise) and "<prefix>gate.bias".
  OutputGate(OutputGateKind kind, int heads, int dHead, int dModel, const std::string& prefix, ParamStore& params);
  void initialise(Rng& rng);
  OutputGateKind kind() const { return kind_; }
  // gate = sigmoid(x W^T + b); o [B*T, H*d_head] is multiplied by it in place (per element, or
  // each head's block by that head's scalar).
  void forward(const Mat& x, Mat& o, Mat& gate, bool rowStable) const;
  // dO: in, gradient wrt the gated o; out, wrt the ungated o (`oUngated`, as forward received it).
  void backward(const Mat& x, const Mat& oUngated, const Mat& gate, Mat& dO, Mat& dx);

 private:
  OutputGateKind kind_;
  int heads_, dHead_;
  Param *w_, *b_;
};

// ---- retention gate -------------------------------------------------------------------------

class RetentionGate {
 public:
  // Creates "<prefix>retention.weight" [H, d] and "<prefix>retention.bias" [H]. The loss adds
  // lossWeight * mean(g) for this layer (the model passes lambda / n_layers, so the total is
  // lambda times the mean over every layer, head and key).
  RetentionGate(int heads, int dModel, double lossWeight, const std::string& prefix, ParamStore& params);
  void initialise(Rng& rng);
  // g [B, H, T] head-major. Returns this layer's sparsity loss.
  double forward(const Mat& x, int B, int T, std::vector<float>& g, bool rowStable) const;
  // dg: d(loss)/d(g) through the attention, [B, H, T]; the sparsity term's gradient is added here.
  void backward(const Mat& x, const std::vector<float>& g, const std::vector<float>& dg, int B, int T, Mat& dx);

 private:
  int heads_;
  double lossWeight_;
  Param *w_, *b_;
};

// ---- value gate -----------------------------------------------------------------------------

// v <- sigmoid(v), element-wise.
void valueGateForward(std::vector<float>& v);
// dv *= s (1 - s), s the gated values forward produced.
void valueGateBackward(const std::vector<float>& gated, std::vector<float>& dv);

}  // namespace attnlab

namespace attnlab {

// The gates with their one-line formulas and config keys, for listings (CLI, UI tooltips).
struct GateInfo {
  std::string name;
  std::string summary;
};
const std::vector<GateInfo>& gateCatalogue();

}  // namespace attnlab
