#pragma once
// Dense float32 matrices, row-major so that a [out, in] weight is laid out as PyTorch stores it
// and a [tokens, features] activation keeps each token's features contiguous.
#include <Eigen/Dense>

namespace attnlab {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXf;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<Mat>;
using ConstMatMap = Eigen::Map<const Mat>;

}  // namespace attnlab
