#pragma once
// The model's building blocks, each forward beside its backward (llm.c style). Activations are
// row-major [N, C] matrices with one token per row. Backward functions accumulate (+=) into
// parameter gradients and write (=) input gradients unless their comment says otherwise.
#include <vector>

#include "core/tensor.h"

namespace attnlab::ops {

// y = x W^T + b, W: [out, in] (PyTorch layout), b: [1, out] or empty.
void linearForward(const Mat& x, const Mat& W, const Mat* b, Mat& y);
// dx = dy W; dW += dy^T x; db += colsum(dy). dx may be null when the input needs no gradient.
void linearBackward(const Mat& dy, const Mat& x, const Mat& W, Mat* dx, Mat& dW, Mat* db);

// y = (x - mean) * rstd * w + b per row (b empty: no bias); saves mean and rstd for the backward.
void layerNormForward(const Mat& x, const Mat& w, const Mat& b, Mat& y, Vec& mean, Vec& rstd, float eps = 1e-5f);
// dx += ...; dw += ...; db += ... (dx accumulates because the residual stream already holds a gradient;
// db is skipped when empty).
void layerNormBackward(const Mat& dy, const Mat& x, const Mat& w, const Vec& mean, const Vec& rstd, Mat& dx, Mat& dw,
                       Mat& db);

// GELU, tanh approximation (as GPT-2).
void geluForward(const Mat& x, Mat& y);
void geluBackward(const Mat& dy, const Mat& x, Mat& dx);

// Mean cross-entropy over rows whose target is not -1; probs gets softmax(logits).
// Returns the loss and sets `counted` to the number of scored rows.
double crossEntropyForward(const Mat& logits, const int* targets, Mat& probs, int& counted);
// dlogits = (probs - onehot(target)) / counted on scored rows, 0 elsewhere.
void crossEntropyBackward(const Mat& probs, const int* targets, int counted, Mat& dlogits);

}  // namespace attnlab::ops
