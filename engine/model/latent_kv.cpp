// Latent KV (multi-head latent attention, MLA): keys and values are up-projections of one shared latent,
//   c = W_DKV x,  k = W_UK c,  v = W_UV c,
// so the decoding cache need hold only c (d_c floats per token and layer) and expands keys and
// values from it. AttentionLayer's share of it: the parameters, the latent's backward, and the
// expansion the decoder reads. forward() and decodeToken() route the key and value projections
// through the latent (attention_layer.cpp, attention_layer_decode.cpp).
#include "model/attention_layer.h"
#include "model/gates.h"
#include "model/ops.h"

namespace attnlab {

void AttentionLayer::addLatentParams(const ModelConfig& config, const std::string& prefix, ParamStore& params) {
  const int dc = config.latentDim();
  wdkv_ = &params.add(prefix + "wdkv.weight", {dc, config.d_model});
  wk_ = &params.add(prefix + "wuk.weight", {Hkv_ * dHead_, dc});
  wv_ = &params.add(prefix + "wuv.weight", {Hkv_ * dHead_, dc});
  if (config.qkv_bias) {  // biases on the up-projections: k, v stay functions of the cached c
    bk_ = &params.add(prefix + "wuk.bias", {Hkv_ * dHead_}, false);
    bv_ = &params.add(prefix + "wuv.bias", {Hkv_ * dHead_}, false);
  }
}

int AttentionLayer::latentDim() const { return wdkv_ ? static_cast<int>(wdkv_->value.rows()) : 0; }

void AttentionLayer::latentBackward(const std::vector<float>& dK, const std::vector<float>& dV, const Mat& x,
                                    const AttentionActs& a, int B, int T, Mat& dx) {
  Mat dFlat, dLatent, dPart;
  mergeHeads(dK.data(), B, T, Hkv_, dHead_, dFlat);
  ops::linearBackward(dFlat, a.latent, wk_->value, &dLatent, wk_->grad, bk_ ? &bk_->grad : nullptr);  // from k_flat = c W_UK^T
  mergeHeads(dV.data(), B, T, Hkv_, dHead_, dFlat);
  ops::linearBackward(dFlat, a.latent, wv_->value, &dPart, wv_->grad, bv_ ? &bv_->grad : nullptr);  // from v_flat = c W_UV^T
  dLatent += dPart;
  ops::linearBackward(dLatent, x, wdkv_->value, &dx, wdkv_->grad, nullptr);  // from c = x W_DKV^T
}

void AttentionLayer::expandLatents(const float* latents, int n, Mat& keys, Mat& values) const {
  const Mat c = ConstMatMap(latents, n, latentDim());
  project(c, *wk_, bk_, keys);
  project(c, *wv_, bv_, values);
  if (valueGate_) {  // the value gate on the expanded values, as forward gates v
    std::vector<float> v(values.data(), values.data() + values.size());
    valueGateForward(v);
    std::copy(v.begin(), v.end(), values.data());
  }
}

}  // namespace attnlab
