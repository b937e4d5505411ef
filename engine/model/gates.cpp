#include "model/gates.h"

#include <cmath>

#include "model/ops.h"
#include "model/row_stable.h"

namespace attnlab {

namespace {
// Scalar std::exp on purpose: Eigen's vectorised exp rounds differently in a block's tail, and
// gate values must not depend on where a token sits.
float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }

void linear(const Mat& x, const Mat& W, const Mat& b, Mat& y, bool rowStable) {
  if (rowStable) linearForwardRowStable(x, W, &b, y);
  else ops::linearForward(x, W, &b, y);
}
}  // namespace

// ---- output gate ----------------------------------------------------------------------------

std::optional<OutputGateKind> outputGateKindOf(const std::string& name) {
  if (name == "none") return OutputGateKind::none;
  if (name == "elementwise") return OutputGateKind::elementwise;
  if (name == "headwise") return OutputGateKind::headwise;
  return std::nullopt;
}

OutputGate::OutputGate(OutputGateKind kind, int heads, int dHead, int dModel, const std::string& prefix, ParamStore& params)
    : kind_(kind), heads_(heads), dHead_(dHead) {
  const int outputs = kind == OutputGateKind::elementwise ? heads * dHead : heads;
  w_ = &params.add(prefix + "gate.weight", {outputs, dModel});
  b_ = &params.add(prefix + "gate.bias", {outputs}, false);
}

void OutputGate::initialise(Rng& rng) {
  for (Eigen::Index i = 0; i < w_->value.size(); ++i) w_->value.data()[i] = rng.normal(0.f, 0.02f);
  b_->value.setZero();  // gates start near 1/2 for every token
}

void OutputGate::forward(const Mat& x, Mat& o, Mat& gate, bool rowStable) const {
  linear(x, w_->value, b_->value, gate, rowStable);
  gate = gate.unaryExpr(&sigmoid);
  if (kind_ == OutputGateKind::elementwise) {
    o.array() *= gate.array();
    return;
  }
  for (int h = 0; h < heads_; ++h) o.middleCols(h * dHead_, dHead_).array().colwise() *= gate.col(h).array();
}

void OutputGate::backward(const Mat& x, const Mat& oUngated, const Mat& gate, Mat& dO, Mat& dx) {
  // o = u * g, g = sigmoid(z): dz = (dO . u) g (1 - g), du = dO * g
  const auto slope = (gate.array() * (1.0f - gate.array())).eval();
  Mat dz;
  if (kind_ == OutputGateKind::elementwise) {
    dz = (dO.array() * oUngated.array() * slope).matrix();
    dO.array() *= gate.array();
  } else {
    dz.resize(gate.rows(), heads_);
    for (int h = 0; h < heads_; ++h) {
      auto block = dO.middleCols(h * dHead_, dHead_);
      dz.col(h) = ((block.array() * oUngated.middleCols(h * dHead_, dHead_).array()).rowwise().sum() * slope.col(h)).matrix();
      block.array().colwise() *= gate.col(h).array();
    }
  }
  Mat dxPart;
  ops::linearBackward(dz, x, w_->value, &dxPart, w_->grad, &b_->grad);  // from z = x W^T + b
  dx += dxPart;
}

// ---- retention gate -------------------------------------------------------------------------

RetentionGate::RetentionGate(int heads, int dModel, double lossWeight, const std::string& prefix, ParamStore& params)
    : heads_(heads), lossWeight_(lossWeight) {
  w_ = &params.add(prefix + "retention.weight", {heads, dModel});
  b_ = &params.add(prefix + "retention.bias", {heads}, false);
}

void RetentionGate::initialise(Rng& rng) {
  for (Eigen::Index i = 0; i < w_->value.size(); ++i) w_->value.data()[i] = rng.normal(0.f, 0.02f);
  b_->value.setConstant(2.0f);  // g ~ 0.88: training starts from keeping (nearly) every key
}

double RetentionGate::forward(const Mat& x, int B, int T, std::vector<float>& g, bool rowStable) const {
  Mat z;  // [B*T, H]
  linear(x, w_->value, b_->value, z, rowStable);
  g.resize(static_cast<size_t>(B) * heads_ * T);
  double sum = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads_; ++h)
      for (int t = 0; t < T; ++t) sum += g[(static_cast<size_t>(b) * heads_ + h) * T + t] = sigmoid(z(b * T + t, h));
  return lossWeight_ * sum / static_cast<double>(g.size());
}

void RetentionGate::backward(const Mat& x, const std::vector<float>& g, const std::vector<float>& dg, int B, int T, Mat& dx) {
  // loss += w * mean(g): dg += w / count; g = sigmoid(z): dz = dg g (1 - g)
  const float sparsity = static_cast<float>(lossWeight_ / static_cast<double>(g.size()));
  Mat dz(static_cast<Eigen::Index>(B) * T, heads_);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads_; ++h)
      for (int t = 0; t < T; ++t) {
        const size_t i = (static_cast<size_t>(b) * heads_ + h) * T + t;
        dz(b * T + t, h) = (dg[i] + sparsity) * g[i] * (1.0f - g[i]);
      }
  Mat dxPart;
  ops::linearBackward(dz, x, w_->value, &dxPart, w_->grad, &b_->grad);  // from z = x W^T + c
  dx += dxPart;
}

// ---- value gate -----------------------------------------------------------------------------

void valueGateForward(std::vector<float>& v) {
  for (float& x : v) x = sigmoid(x);
}

void valueGateBackward(const std::vector<float>& gated, std::vector<float>& dv) {
  for (size_t i = 0; i < dv.size(); ++i) dv[i] *= gated[i] * (1.0f - gated[i]);
}

}  // namespace attnlab

namespace attnlab {

const std::vector<GateInfo>& gateCatalogue() {
  static const std::vector<GateInfo> gates = {
      {"retention_gate", "g_j = sigmoid(w.x_j + c) per head; softmax adds log g_j, sigmoid multiplies a_ij by g_j; "
                         "loss += lambda mean(g)  (model.retention_gate=true, model.retention_sparsity=lambda)"},
      {"output_gate", "o_i *= sigmoid(W_g x_i), per element or one scalar per head  (model.output_gate=elementwise|headwise)"},
      {"presence", "p_i = ||h_i||^2 / (tau + ||h_i||^2) of the block input h; oattention's source and receiver gate  "
                   "(model.attention_settings.presence_tau)"},
      {"value_gate", "v_j <- sigmoid(v_j), sigmoid-value detector heads  (model.value_gate=true)"},
  };
  return gates;
}

}  // namespace attnlab
