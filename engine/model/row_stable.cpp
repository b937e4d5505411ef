#include "model/row_stable.h"

namespace attnlab {

void linearForwardRowStable(const Mat& x, const Mat& W, const Mat* b, Mat& y) {
  const Eigen::Index rows = x.rows(), in = x.cols(), out = W.rows();
  const Mat Wt = W.transpose();  // [in, out]: the inner loop runs over contiguous outputs and vectorises
  y.resize(rows, out);
#pragma omp parallel for schedule(static)
  for (Eigen::Index r = 0; r < rows; ++r) {
    float* yr = y.data() + r * out;
    const float* xr = x.data() + r * in;
    for (Eigen::Index o = 0; o < out; ++o) yr[o] = 0.0f;
    for (Eigen::Index k = 0; k < in; ++k) {
      const float xk = xr[k];
      const float* w = Wt.data() + k * out;
      for (Eigen::Index o = 0; o < out; ++o) yr[o] += xk * w[o];
    }
    if (b && b->size())
      for (Eigen::Index o = 0; o < out; ++o) yr[o] += b->data()[o];
  }
}

}  // namespace attnlab
