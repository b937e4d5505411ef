#include "attention/presence.h"

namespace attnlab {

SettingSpec presenceTauSpec() {
  return {"presence_tau", 0.01, 1e-6, 1e3, false, "tau: presence p = ||h||^2 / (tau + ||h||^2) of the block input h"};
}

void presenceForward(const Mat& h, float tau, std::vector<float>& p) {
  p.resize(h.rows());
  for (Eigen::Index t = 0; t < h.rows(); ++t) {
    const float* row = h.data() + t * h.cols();
    float n = 0;
    for (Eigen::Index c = 0; c < h.cols(); ++c) n += row[c] * row[c];
    p[t] = n / (tau + n);
  }
}

void presenceBackward(const Mat& h, float tau, const std::vector<float>& dp, Mat& dh) {
  for (Eigen::Index t = 0; t < h.rows(); ++t) {
    const float n = h.row(t).squaredNorm();
    dh.row(t) += (dp[t] * 2.0f * tau / ((tau + n) * (tau + n))) * h.row(t);
  }
}

}  // namespace attnlab
