#pragma once
// The presence gate of presence-coupled variants (OAttention): p_i = ||h_i||^2 / (tau + ||h_i||^2)
// of the token's hidden carrier h_i (the block input). The attention layer computes it when its
// variant asks (needsPresence) and hands it over; forward beside backward.
#include <vector>

#include "core/settings.h"
#include "core/tensor.h"

namespace attnlab {

// tau, declared by the variants that need presence (so validation and the UI see it).
SettingSpec presenceTauSpec();
// p_t = n_t / (tau + n_t), n_t = ||h_t||^2 summed in index order, so p_t depends on h_t alone
// (bitwise) and is exactly 0 for a zero carrier.
void presenceForward(const Mat& h, float tau, std::vector<float>& p);
// dh += dp_t * dp/dh = dp_t * tau / (tau + n_t)^2 * 2 h_t.
void presenceBackward(const Mat& h, float tau, const std::vector<float>& dp, Mat& dh);

}  // namespace attnlab
