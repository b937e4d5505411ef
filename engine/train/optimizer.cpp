#include "train/optimizer.h"

#include <cmath>

#include "core/threads.h"

namespace attnlab {

AdamW::AdamW(ParamStore& params, const TrainConfig& config) : params_(params), config_(config) {
  for (auto& p : params_.all()) {
    m_.push_back(Mat::Zero(p->value.rows(), p->value.cols()));
    v_.push_back(Mat::Zero(p->value.rows(), p->value.cols()));
  }
}

void AdamW::step(double lr, const std::vector<float>* ratios) {
  ++t_;
  const float b1 = static_cast<float>(config_.beta1), b2 = static_cast<float>(config_.beta2);
  const float c1 = static_cast<float>(1.0 - std::pow(config_.beta1, t_));
  const float c2 = static_cast<float>(1.0 - std::pow(config_.beta2, t_));
  const float eps = static_cast<float>(config_.eps), lrf = static_cast<float>(lr);
  auto& all = params_.all();
  // One pass over each tensor's elements (moments, decay and update together), the tensors
  // shared among the threads: they are independent.
#pragma omp parallel for schedule(dynamic) if (all.size() > 1 && !inParallelRegion())
  for (size_t i = 0; i < all.size(); ++i) {
    Param& p = *all[i];
    const float lrp = ratios ? lrf * (*ratios)[i] : lrf;
    const float keep = p.decay ? 1.0f - lrp * static_cast<float>(config_.weight_decay) : 1.0f;  // decoupled decay
    float* value = p.value.data();
    const float* grad = p.grad.data();
    float* m = m_[i].data();
    float* v = v_[i].data();
    for (Eigen::Index j = 0; j < p.value.size(); ++j) {
      m[j] = b1 * m[j] + (1 - b1) * grad[j];
      v[j] = b2 * v[j] + (1 - b2) * grad[j] * grad[j];
      value[j] = value[j] * keep - lrp * (m[j] / c1) / (std::sqrt(v[j] / c2) + eps);
    }
  }
}

bool AdamW::restore(int steps, std::vector<Mat> m, std::vector<Mat> v) {
  const auto& all = params_.all();
  if (steps < 0 || m.size() != all.size() || v.size() != all.size()) return false;
  for (size_t i = 0; i < all.size(); ++i) {
    const Mat& value = all[i]->value;
    if (m[i].rows() != value.rows() || m[i].cols() != value.cols() || v[i].rows() != value.rows() ||
        v[i].cols() != value.cols())
      return false;
  }
  t_ = steps;
  m_ = std::move(m);
  v_ = std::move(v);
  return true;
}

double gradientNorm(const ParamStore& params) {
  double sq = 0;
  for (auto& p : params.all()) sq += p->grad.cast<double>().squaredNorm();
  return std::sqrt(sq);
}

double clipGradients(ParamStore& params, double maxNorm) { return clipGradients(params, maxNorm, gradientNorm(params)); }

double clipGradients(ParamStore& params, double maxNorm, double norm) {
  if (maxNorm > 0 && norm > maxNorm) {
    const float s = static_cast<float>(maxNorm / (norm + 1e-12));
    for (auto& p : params.all()) p->grad *= s;
  }
  return norm;
}

}  // namespace attnlab
