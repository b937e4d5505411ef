#pragma once
// A block's normalisation and MLP, in the kinds the config names (model.norm, model.mlp):
//   norm: "layernorm" (weight and bias), "layernorm_no_bias", "rmsnorm" (weight only);
//   mlp:  "gelu" (tanh approximation, GPT-2's gelu_new), "gelu_erf" (exact, GPT-NeoX),
//         "swiglu" (down(silu(gate(x)) * up(x)), Llama); biases when model.mlp_bias.
// Each creates its parameters under a name prefix and runs forward beside backward.
#include <string>

#include "core/random.h"
#include "core/tensor.h"
#include "config/model_config.h"
#include "core/params.h"

namespace attnlab {

inline constexpr const char* kNormNames = "layernorm, layernorm_no_bias, rmsnorm";
inline constexpr const char* kMlpNames = "gelu, gelu_erf, swiglu";
bool isNormName(const std::string& name);
bool isMlpName(const std::string& name);

// Saved statistics of one normalisation (mean unused by RMSNorm).
struct NormActs {
  Vec mean, rstd;
};

class Norm {
 public:
  Norm() = default;
  // Creates `name`.weight (and `name`.bias for layernorm). Throws std::invalid_argument on an unknown kind.
  Norm(const ModelConfig& config, const std::string& name, ParamStore& params);
  void initialise() { w_->value.setOnes(); }
  void forward(const Mat& x, Mat& y, NormActs& acts) const;
  // dx (+=) gradient wrt x; accumulates the parameter gradients.
  void backward(const Mat& dy, const Mat& x, const NormActs& acts, Mat& dx) const;

 private:
  bool rms_ = false;
  float eps_ = 1e-5f;
  Param* w_ = nullptr;
  Param* b_ = nullptr;  // null without bias
};

// Activations of one MLP pass: fc = up(x), gate = gate(x) (SwiGLU only), act = f(fc[, gate]).
struct MlpActs {
  Mat fc, gate, act;
};

class Mlp {
 public:
  Mlp() = default;
  // Creates `prefix`fc, (gate,) proj weights (and biases). Throws std::invalid_argument on an unknown kind.
  Mlp(const ModelConfig& config, const std::string& prefix, ParamStore& params);
  void initialise(Rng& rng, float residualStd);
  void forward(const Mat& x, MlpActs& acts, Mat& y) const;  // hidden() then down()
  void hidden(const Mat& x, MlpActs& acts) const;            // acts.act = f(up(x)[, gate(x)])
  void down(const MlpActs& acts, Mat& y) const;              // y = proj(acts.act)
  // dx (=) gradient wrt x; accumulates the parameter gradients.
  void backward(const Mat& dy, const Mat& x, const MlpActs& acts, Mat& dx) const;

 private:
  enum class Kind { gelu, gelu_erf, swiglu } kind_ = Kind::gelu;
  Param *fc_w_ = nullptr, *fc_b_ = nullptr, *gate_w_ = nullptr, *gate_b_ = nullptr, *proj_w_ = nullptr, *proj_b_ = nullptr;
};

}  // namespace attnlab
