#include "model/block_parts.h"

#include <stdexcept>

#include "model/block_ops.h"
#include "model/ops.h"

namespace attnlab {

bool isNormName(const std::string& n) { return n == "layernorm" || n == "layernorm_no_bias" || n == "rmsnorm"; }
bool isMlpName(const std::string& n) { return n == "gelu" || n == "gelu_erf" || n == "swiglu"; }

namespace {
const Mat kNoBias;
const Mat& valueOr(const Param* p) { return p ? p->value : kNoBias; }
Mat* gradOf(Param* p) { return p ? &p->grad : nullptr; }
void fillNormal(Param* p, Rng& rng, float stddev) {
  if (p)
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] = rng.normal(0.f, stddev);
}
}  // namespace

Norm::Norm(const ModelConfig& c, const std::string& name, ParamStore& params) {
  if (!isNormName(c.norm)) throw std::invalid_argument("unknown norm '" + c.norm + "' (known: " + kNormNames + ")");
  rms_ = c.norm == "rmsnorm";
  eps_ = static_cast<float>(c.norm_eps);
  w_ = &params.add(name + ".weight", {c.d_model}, false);
  if (c.norm == "layernorm") b_ = &params.add(name + ".bias", {c.d_model}, false);
}

void Norm::forward(const Mat& x, Mat& y, NormActs& a) const {
  if (rms_) ops::rmsNormForward(x, w_->value, y, a.rstd, eps_);
  else ops::layerNormForward(x, w_->value, valueOr(b_), y, a.mean, a.rstd, eps_);
}

void Norm::backward(const Mat& dy, const Mat& x, const NormActs& a, Mat& dx) const {
  Mat noBiasGrad;
  if (rms_) ops::rmsNormBackward(dy, x, w_->value, a.rstd, dx, w_->grad);
  else ops::layerNormBackward(dy, x, w_->value, a.mean, a.rstd, dx, w_->grad, b_ ? b_->grad : noBiasGrad);
}

Mlp::Mlp(const ModelConfig& c, const std::string& prefix, ParamStore& params) {
  if (!isMlpName(c.mlp)) throw std::invalid_argument("unknown mlp '" + c.mlp + "' (known: " + kMlpNames + ")");
  kind_ = c.mlp == "swiglu" ? Kind::swiglu : c.mlp == "gelu_erf" ? Kind::gelu_erf : Kind::gelu;
  const int d = c.d_model;
  fc_w_ = &params.add(prefix + "fc.weight", {c.d_ff, d});
  if (c.mlp_bias) fc_b_ = &params.add(prefix + "fc.bias", {c.d_ff}, false);
  if (kind_ == Kind::swiglu) {
    gate_w_ = &params.add(prefix + "gate.weight", {c.d_ff, d});
    if (c.mlp_bias) gate_b_ = &params.add(prefix + "gate.bias", {c.d_ff}, false);
  }
  proj_w_ = &params.add(prefix + "proj.weight", {d, c.d_ff});
  if (c.mlp_bias) proj_b_ = &params.add(prefix + "proj.bias", {d}, false);
}

void Mlp::initialise(Rng& rng, float residualStd) {
  fillNormal(fc_w_, rng, 0.02f);
  fillNormal(gate_w_, rng, 0.02f);
  fillNormal(proj_w_, rng, residualStd);
}

void Mlp::forward(const Mat& x, MlpActs& a, Mat& y) const {
  hidden(x, a);
  down(a, y);
}

void Mlp::hidden(const Mat& x, MlpActs& a) const {
  ops::linearForward(x, fc_w_->value, fc_b_ ? &fc_b_->value : nullptr, a.fc);
  switch (kind_) {
    case Kind::gelu: ops::geluForward(a.fc, a.act); break;
    case Kind::gelu_erf: ops::geluErfForward(a.fc, a.act); break;
    case Kind::swiglu:
      ops::linearForward(x, gate_w_->value, gate_b_ ? &gate_b_->value : nullptr, a.gate);
      ops::swigluForward(a.gate, a.fc, a.act);
      break;
  }
}

void Mlp::down(const MlpActs& a, Mat& y) const { ops::linearForward(a.act, proj_w_->value, proj_b_ ? &proj_b_->value : nullptr, y); }

void Mlp::backward(const Mat& dy, const Mat& x, const MlpActs& a, Mat& dx) const {
  Mat dAct, dFc, dGate, dxGate;
  ops::linearBackward(dy, a.act, proj_w_->value, &dAct, proj_w_->grad, gradOf(proj_b_));  // from y = proj(act)
  switch (kind_) {
    case Kind::gelu: ops::geluBackward(dAct, a.fc, dFc); break;
    case Kind::gelu_erf: ops::geluErfBackward(dAct, a.fc, dFc); break;
    case Kind::swiglu: ops::swigluBackward(dAct, a.gate, a.fc, dGate, dFc); break;  // from act = silu(gate) * fc
  }
  ops::linearBackward(dFc, x, fc_w_->value, &dx, fc_w_->grad, gradOf(fc_b_));  // from fc = x Wfc^T
  if (gate_w_) {
    ops::linearBackward(dGate, x, gate_w_->value, &dxGate, gate_w_->grad, gradOf(gate_b_));  // from gate = x Wg^T
    dx += dxGate;
  }
}

}  // namespace attnlab
