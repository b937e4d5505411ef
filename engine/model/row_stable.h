#pragma once
// A linear map whose result for a token row is bitwise a function of that row alone.
// Eigen's blocked product rounds a row differently depending on where the blocking puts it
// (main panel or remainder), so inserting a token can change the last bit of its neighbours'
// projections. Exact contracts such as OAttention's null insertion need the
// neighbours untouched to the bit, so presence-coupled layers project with this instead.
#include "core/tensor.h"

namespace attnlab {

// y = x W^T (+ b), W: [out, in]. Each output is accumulated over the inputs in index order,
// the same sequence of operations for every row; b may be null or empty.
void linearForwardRowStable(const Mat& x, const Mat& W, const Mat* b, Mat& y);

}  // namespace attnlab
