#pragma once
// The building blocks pretrained models bring beside the lab's own (model/ops.h): RMSNorm, the
// exact erf GELU and the SwiGLU product, each forward beside its backward. Same conventions as
// ops.h: rows are tokens; backward functions accumulate (+=) into parameter gradients.
#include "core/tensor.h"

namespace attnlab::ops {

// y = x * rstd * w per row, rstd = 1 / sqrt(mean(x^2) + eps) (Llama's RMSNorm); saves rstd.
void rmsNormForward(const Mat& x, const Mat& w, Mat& y, Vec& rstd, float eps);
// dx += ...; dw += ... (dx accumulates, as layerNormBackward's does).
void rmsNormBackward(const Mat& dy, const Mat& x, const Mat& w, const Vec& rstd, Mat& dx, Mat& dw);

// GELU, exact: y = 0.5 x (1 + erf(x / sqrt 2)) (GPT-NeoX's "gelu").
void geluErfForward(const Mat& x, Mat& y);
void geluErfBackward(const Mat& dy, const Mat& x, Mat& dx);

// SwiGLU: y = silu(g) * u with silu(g) = g sigmoid(g) (Llama's MLP: gate g, up u).
void swigluForward(const Mat& g, const Mat& u, Mat& y);
// dg = dy * u * silu'(g), du = dy * silu(g) (both written).
void swigluBackward(const Mat& dy, const Mat& g, const Mat& u, Mat& dg, Mat& du);

}  // namespace attnlab::ops
