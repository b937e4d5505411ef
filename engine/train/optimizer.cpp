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
  // The tensors are independent: shared among the threads. Decay and update in one expression.
#pragma omp parallel for schedule(dynamic) if (all.size() > 1 && !inParallelRegion())
  for (size_t i = 0; i < all.size(); ++i) {
    Param& p = *all[i];
    const float lrp = ratios ? lrf * (*ratios)[i] : lrf;
    const float keep = p.decay ? 1.0f - lrp * static_cast<float>(config_.weight_decay) : 1.0f;  // decoupled decay
    m_[i] = b1 * m_[i] + (1 - b1) * p.grad;
    v_[i] = b2 * v_[i] + (1 - b2) * p.grad.cwiseProduct(p.grad);
    p.value.array() = p.value.array() * keep - lrp * (m_[i].array() / c1) / ((v_[i].array() / c2).sqrt() + eps);
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

std::vector<double> gradientSquaredNorms(const ParamStore& params) {
  const auto& all = params.all();
  std::vector<double> squaredNorms(all.size());
#pragma omp parallel for schedule(dynamic) if (all.size() > 1 && !inParallelRegion())
  for (size_t i = 0; i < all.size(); ++i) squaredNorms[i] = all[i]->grad.cast<double>().squaredNorm();
  return squaredNorms;
}

double gradientNorm(const std::vector<double>& squaredNorms) {
  double sq = 0;
  for (double s : squaredNorms) sq += s;
  return std::sqrt(sq);
}

double gradientNorm(const ParamStore& params) { return gradientNorm(gradientSquaredNorms(params)); }

double clipGradients(ParamStore& params, double maxNorm) { return clipGradients(params, maxNorm, gradientNorm(params)); }

double clipGradients(ParamStore& params, double maxNorm, double norm) {
  if (maxNorm > 0 && norm > maxNorm) {
    const float s = static_cast<float>(maxNorm / (norm + 1e-12));
    for (auto& p : params.all()) p->grad *= s;
  }
  return norm;
}

}  // namespace attnlab
