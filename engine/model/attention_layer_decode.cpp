// AttentionLayer's decoding half: one token's projections, rotation and gates, and after the
// attention over a cache (engine/kv/decoder.h) its output path. Each line repeats the matching
// step of AttentionLayer::forward for a single row.
#include <cmath>

#include "model/attention_layer.h"
#include "model/ops.h"
#include "model/row_stable.h"

namespace attnlab {

float AttentionLayer::scoreScale() const { return 1.0f / std::sqrt(static_cast<float>(dHead_)); }

bool AttentionLayer::rotary() const { return positional_.rotaryPairs() > 0 && variant_->usesDotScores(); }

void AttentionLayer::decodeToken(const Mat& x, const Mat& h, int token, int pos, std::vector<double>& angleSum,
                                 DecodeToken& out) const {
  out.position = pos;
  Mat flat, latent;
  if (wdkv_) {  // latent KV: c = W_DKV x, the keys' and values' input and what the cache holds
    project(x, *wdkv_, nullptr, latent);
    out.latent.assign(latent.data(), latent.data() + latent.size());
  } else {
    out.latent.clear();
  }
  const Mat& kvIn = wdkv_ ? latent : x;
  out.k.clear();
  out.v.clear();
  if (!readsSharedKv()) {  // a cross-layer KV reader attends over its source's cached rows
    project(kvIn, *wk_, bk_, flat);
    out.k.assign(flat.data(), flat.data() + flat.size());
  }
  if (wq_) {
    project(x, *wq_, bq_, flat);
    out.q.assign(flat.data(), flat.data() + flat.size());
  } else {  // q[h] = k[h / group]
    out.q.resize(static_cast<size_t>(H_) * dHead_);
    for (int hd = 0; hd < H_; ++hd)
      std::copy_n(out.k.data() + static_cast<size_t>(hd / (H_ / Hkv_)) * dHead_, dHead_, out.q.data() + static_cast<size_t>(hd) * dHead_);
  }
  if (wv_) {
    project(kvIn, *wv_, bv_, flat);
    out.v.assign(flat.data(), flat.data() + flat.size());
  } else if (!readsSharedKv()) {
    out.v = out.k;
  }
  if (valueGate_) valueGateForward(out.v);

  out.angles.resize(0, 0);
  if (rotary()) {
    positional_.tokenRotaryAngles(layer_, x, &token, &pos, 1, 1, out.angles);
    if (positional_.accumulatesAngles()) {  // phi_t = phi_{t-1} + omega_t, summed in double as forward does
      angleSum.resize(out.angles.cols(), 0.0);
      for (Eigen::Index m = 0; m < out.angles.cols(); ++m) out.angles(0, m) = static_cast<float>(angleSum[m] += out.angles(0, m));
    }
    const int pairs = static_cast<int>(out.angles.cols());
    for (int hd = 0; hd < H_; ++hd) rotatePairs(out.q.data() + static_cast<size_t>(hd) * dHead_, 1, dHead_, out.angles.data(), pairs, false);
    for (int hd = 0; hd < static_cast<int>(out.k.size()) / dHead_; ++hd) {  // none for a reader
      rotatePairs(out.k.data() + static_cast<size_t>(hd) * dHead_, 1, dHead_, out.angles.data(), pairs, false);
      if (positional_.rotatesValues()) rotatePairs(out.v.data() + static_cast<size_t>(hd) * dHead_, 1, dHead_, out.angles.data(), pairs, false);
    }
  }

  out.retention.clear();
  if (retention_) retention_->forward(x, 1, 1, out.retention, rowStable_);
  out.presence = 1.0f;
  if (presenceTau_ > 0) {
    std::vector<float> p;
    presenceForward(h, presenceTau_, p);
    out.presence = p[0];
  }
}

void AttentionLayer::decodeOutput(const Mat& x, const DecodeToken& token, Mat& oHeads, Mat& y) const {
  if (token.angles.size() && positional_.rotatesValues())  // o_i turned back by -phi_i
    for (int hd = 0; hd < H_; ++hd)
      rotatePairs(oHeads.data() + static_cast<size_t>(hd) * dHead_, 1, dHead_, token.angles.data(), static_cast<int>(token.angles.cols()), true);
  if (presenceTau_ > 0) oHeads *= token.presence;  // receiver presence
  if (outputGate_) {
    Mat gate;
    outputGate_->forward(x, oHeads, gate, rowStable_);
  }
  project(oHeads, *wo_, bo_, y);
}

}  // namespace attnlab
