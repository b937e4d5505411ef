#pragma once
// One block's attention: projections (with grouped K/V heads), positional rotation and score
// bias, the layer's variant, head merge and output projection. Forward beside backward.
#include <memory>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "core/random.h"
#include "core/tensor.h"
#include "model/config.h"
#include "model/params.h"
#include "model/trace.h"
#include "positional/positional.h"

namespace attnlab {

// Activations of one attention layer for one forward pass.
struct AttentionActs {
  AttentionShape shape;
  Mat q_flat, k_flat, v_flat;           // [B*T, heads*d_head] projections before rotation
  std::vector<float> q, k, v;           // head-major, after rotation
  Mat angles;                           // [B*T, pairs] rotary angles (empty without rotation)
  std::vector<float> bias;              // [H, T, T] positional score bias (empty without)
  std::vector<float> scores, weights;   // [B, H, T, T]
  std::vector<float> o;                 // head-major output
  Mat o_flat;                           // [B*T, H*d_head]
};

class AttentionLayer {
 public:
  // Throws std::invalid_argument on a bad variant name or setting.
  AttentionLayer(const ModelConfig& config, int layer, const PositionalEncoding& positional, ParamStore& params);
  ~AttentionLayer();
  void initialise(Rng& rng, float residualStd);

  const std::string& variantName() const { return variantName_; }
  void forward(const Mat& x, const int* pos, int B, int T, AttentionActs& acts, Mat& y) const;
  // dx (=) gradient wrt the layer input x; accumulates parameter gradients.
  void backward(const Mat& x, const Mat& dy, const int* pos, int B, int T, AttentionActs& acts, Mat& dx);
  // Copies batch element 0's maps, q, k, v into `trace`.
  void capture(const AttentionActs& acts, LayerTrace& trace) const;

 private:
  int layer_, H_, Hkv_, dHead_;
  std::string variantName_;
  const PositionalEncoding& positional_;
  std::unique_ptr<AttentionVariant> variant_;
  Param *wq_, *wk_, *wv_, *wo_;
};

// [B*T, heads*d] (token rows) <-> [B, heads, T, d] (head-major blocks).
void splitHeads(const Mat& flat, int B, int T, int heads, int d, std::vector<float>& out);
void mergeHeads(const float* headMajor, int B, int T, int heads, int d, Mat& flat);

}  // namespace attnlab
