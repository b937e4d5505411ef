#include "model/block_ops.h"

#include <cmath>

namespace attnlab::ops {

void rmsNormForward(const Mat& x, const Mat& w, Mat& y, Vec& rstd, float eps) {
  y.resize(x.rows(), x.cols());
  rstd.resize(x.rows());
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    rstd[n] = 1.0f / std::sqrt(x.row(n).squaredNorm() / static_cast<float>(x.cols()) + eps);
    y.row(n) = (x.row(n).array() * rstd[n] * w.row(0).array()).matrix();
  }
}

void rmsNormBackward(const Mat& dy, const Mat& x, const Mat& w, const Vec& rstd, Mat& dx, Mat& dw) {
  const float C = static_cast<float>(x.cols());
  Eigen::Array<float, 1, Eigen::Dynamic> xhat(x.cols()), dxhat(x.cols());  // reused by every row: no allocation per row
  for (Eigen::Index n = 0; n < x.rows(); ++n) {
    xhat = x.row(n).array() * rstd[n];
    dxhat = dy.row(n).array() * w.row(0).array();  // from y = xhat * w
    dw.row(0).array() += dy.row(n).array() * xhat;
    // from xhat = x * rstd with rstd depending on every x of the row: d rstd / dx = -rstd^3 x / C
    dx.row(n).array() += rstd[n] * (dxhat - xhat * ((dxhat * xhat).sum() / C));
  }
}

namespace {
constexpr float kInvSqrt2 = 0.7071067811865476f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f;
}  // namespace

void geluErfForward(const Mat& x, Mat& y) {
  y.resize(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.size(); ++i) y.data()[i] = 0.5f * x.data()[i] * (1.0f + std::erf(x.data()[i] * kInvSqrt2));
}

void geluErfBackward(const Mat& dy, const Mat& x, Mat& dx) {
  dx.resize(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const float v = x.data()[i];
    // d/dx [x Phi(x)] = Phi(x) + x phi(x)
    dx.data()[i] = dy.data()[i] * (0.5f * (1.0f + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5f * v * v));
  }
}

void swigluForward(const Mat& g, const Mat& u, Mat& y) {
  y.resize(g.rows(), g.cols());
  y.array() = g.array() / (1.0f + (-g.array()).exp()) * u.array();
}

void swigluBackward(const Mat& dy, const Mat& g, const Mat& u, Mat& dg, Mat& du) {
  const auto sig = (1.0f / (1.0f + (-g.array()).exp())).eval();
  du = (dy.array() * g.array() * sig).matrix();                                      // from y = silu(g) u
  dg = (dy.array() * u.array() * sig * (1.0f + g.array() * (1.0f - sig))).matrix();  // silu' = s (1 + g (1 - s))
}

}  // namespace attnlab::ops
