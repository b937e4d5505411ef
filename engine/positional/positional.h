#pragma once
// A positional encoding acts at one or more of three places, each optional:
//   1. absolute: added to the token embeddings (sinusoidal, learned);
//   2. rotary: rotates pairs of q/k features by per-token angles (RoPE, accumulated rotation);
//   3. score bias: adds b_h(i, j) to the attention scores (ALiBi and its log-distance form).
// Positions are passed explicitly so that a KV cache that dropped entries stays correct.
// Members register in PositionalRegistry, one file each.
#include <string>
#include <vector>

#include "core/random.h"
#include "core/registry.h"
#include "core/settings.h"
#include "core/tensor.h"
#include "config/model_config.h"
#include "core/params.h"

namespace attnlab {

class PositionalEncoding {
 public:
  virtual ~PositionalEncoding() = default;

  virtual std::vector<SettingSpec> settingSpecs() const { return {}; }
  // Reads settings and creates parameters. Returns "" or a one-line reason.
  virtual std::string configure(const ModelConfig& config, ParamStore& params) = 0;
  // Draws initial parameter values (called once on a fresh model, not on checkpoint load).
  virtual void initialise(ParamStore& /*params*/, Rng& /*rng*/) {}
  // Copies what initialise() drew that is not a parameter (a fixed table) from the same encoding
  // of a model with the same config: copyModel's copy skips initialise().
  virtual void copyFixedState(const PositionalEncoding& /*from*/) {}

  // --- 1. absolute: x[b*T + t] += table(pos[t]) -------------------------------------------
  virtual bool absolute() const { return false; }
  virtual void addToEmbeddings(Mat& /*x*/, const int* /*pos*/, int /*B*/, int /*T*/) const {}
  virtual void embeddingsBackward(const Mat& /*dx*/, const int* /*pos*/, int /*B*/, int /*T*/, ParamStore& /*params*/) const {}

  // --- 2. rotary: angles[b*T + t][m] for pair m of the first rotaryPairs() pairs -------------
  virtual int rotaryPairs() const { return 0; }
  // `x` is the layer's normalised input [B*T, d_model] (token-dependent rotations read it).
  virtual void rotaryAngles(int /*layer*/, const Mat& /*x*/, const int* /*pos*/, int /*B*/, int /*T*/, Mat& /*angles*/) const {}
  // The same with the token ids [B*T] too, for rotations indexed by token id (the attention layer
  // calls this one); encodings that do not read ids keep the default.
  virtual void tokenRotaryAngles(int layer, const Mat& x, const int* /*tokens*/, const int* pos, int B, int T, Mat& angles) const {
    rotaryAngles(layer, x, pos, B, T, angles);
  }
  // True when the angles depend on parameters or on x (token-dependent rotations): the layer then
  // computes d(loss)/d(angles) and hands it to rotaryAnglesBackward.
  virtual bool rotaryAnglesNeedGradient() const { return false; }
  // Given d(loss)/d(angles) [B*T, pairs], accumulates into the encoding's own parameter gradients and adds to dx.
  virtual void rotaryAnglesBackward(int /*layer*/, const Mat& /*x*/, const Mat& /*dAngles*/, int /*B*/, int /*T*/, Mat& /*dx*/) const {}
  // True when the angles are running sums over the call's tokens (accumulated rotation): a decoder
  // fed one token per call adds each call's angles to the previous token's.
  virtual bool accumulatesAngles() const { return false; }
  // True when values turn too: v_j by +angle_j before attention, head output o_i by -angle_i after
  // (the attention layer applies both and their backward).
  virtual bool rotatesValues() const { return false; }

  // --- 3. score bias: out[i][j] += b_h(qpos[i], kpos[j]) --------------------------------------
  virtual bool scoreBias() const { return false; }
  virtual void addScoreBias(int /*head*/, int /*heads*/, const int* /*qpos*/, int /*Tq*/, const int* /*kpos*/, int /*Tk*/,
                            float* /*out*/) const {}
};

using PositionalRegistry = Registry<PositionalEncoding>;

// Rotates pair m = (x[2m], x[2m+1]) of each row of a [rows, d_head] block by angles[row][m]
// (inverse=true rotates by -angle, which is the backward of the forward rotation).
void rotatePairs(float* x, int rows, int dHead, const float* angles, int pairs, bool inverse);
// The same with the cosines and (signed: negated for the inverse) sines of the angles given,
// [rows, pairs] each: several heads turned by one token's angles compute them once.
void rotatePairsBy(float* x, int rows, int dHead, const float* cosines, const float* sines, int pairs);
// d(loss)/d(angle) for y = R(angle) x: given dy and the rotated y, dAngle[m] += dy0*(-y1) + dy1*y0.
void rotationAngleGrad(const float* dy, const float* y, int rows, int dHead, int pairs, float* dAngles);

}  // namespace attnlab
