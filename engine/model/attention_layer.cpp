#include "model/attention_layer.h"

#include <cmath>
#include <stdexcept>

#include "model/ops.h"

namespace attnlab {

void splitHeads(const Mat& flat, int B, int T, int heads, int d, std::vector<float>& out) {
  out.resize(static_cast<size_t>(B) * heads * T * d);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < T; ++t)
        std::copy_n(flat.data() + (static_cast<size_t>(b) * T + t) * heads * d + h * d, d,
                    out.data() + ((static_cast<size_t>(b) * heads + h) * T + t) * d);
}

void mergeHeads(const float* headMajor, int B, int T, int heads, int d, Mat& flat) {
  flat.resize(static_cast<Eigen::Index>(B) * T, heads * d);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < T; ++t)
        std::copy_n(headMajor + ((static_cast<size_t>(b) * heads + h) * T + t) * d, d,
                    flat.data() + (static_cast<size_t>(b) * T + t) * heads * d + h * d);
}

namespace {
// Rotates every [T, d_head] block of a head-major buffer by its batch element's angles.
void rotateHeads(std::vector<float>& x, const Mat& angles, int B, int heads, int T, int dHead, bool inverse) {
  const int pairs = static_cast<int>(angles.cols());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h)
      rotatePairs(x.data() + (static_cast<size_t>(b) * heads + h) * T * dHead, T, dHead,
                  angles.data() + static_cast<size_t>(b) * T * pairs, pairs, inverse);
}

// Sums d(loss)/d(angle) over the heads of a rotated head-major buffer `y` given its gradient `dy`.
void angleGradient(const std::vector<float>& dy, const std::vector<float>& y, const Mat& angles, int B, int heads, int T,
                   int dHead, Mat& dAngles) {
  const int pairs = static_cast<int>(angles.cols());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h) {
      const size_t off = (static_cast<size_t>(b) * heads + h) * T * dHead;
      rotationAngleGrad(dy.data() + off, y.data() + off, T, dHead, pairs, dAngles.data() + static_cast<size_t>(b) * T * pairs);
    }
}
}  // namespace

AttentionLayer::AttentionLayer(const ModelConfig& config, int layer, const PositionalEncoding& positional, ParamStore& params)
    : layer_(layer),
      H_(config.n_heads),
      Hkv_(config.kvHeads()),
      dHead_(config.headDim()),
      variantName_(config.attentionOf(layer)),
      positional_(positional) {
  variant_ = AttentionRegistry::instance().create(variantName_);
  if (!variant_)
    throw std::invalid_argument("unknown attention variant '" + variantName_ + "' (known: " +
                                AttentionRegistry::instance().names() + ")");
  const std::string prefix = "blocks." + std::to_string(layer) + ".attn.";
  const int d = config.d_model;
  wq_ = &params.add(prefix + "wq.weight", {H_ * dHead_, d});
  wk_ = &params.add(prefix + "wk.weight", {Hkv_ * dHead_, d});
  wv_ = &params.add(prefix + "wv.weight", {Hkv_ * dHead_, d});
  wo_ = &params.add(prefix + "wo.weight", {d, H_ * dHead_});
  const std::string why = variant_->configure(config, prefix, params);
  if (!why.empty()) throw std::invalid_argument(why);
}

AttentionLayer::~AttentionLayer() = default;

void AttentionLayer::initialise(Rng& rng, float residualStd) {
  for (Param* p : {wq_, wk_, wv_})
    for (Eigen::Index i = 0; i < p->value.size(); ++i) p->value.data()[i] = rng.normal(0.f, 0.02f);
  for (Eigen::Index i = 0; i < wo_->value.size(); ++i) wo_->value.data()[i] = rng.normal(0.f, residualStd);
  variant_->initialise(rng);
}

void AttentionLayer::forward(const Mat& x, const int* pos, int B, int T, AttentionActs& a, Mat& y) const {
  a.shape = {B, T, H_, Hkv_, dHead_};
  ops::linearForward(x, wq_->value, nullptr, a.q_flat);
  ops::linearForward(x, wk_->value, nullptr, a.k_flat);
  ops::linearForward(x, wv_->value, nullptr, a.v_flat);
  splitHeads(a.q_flat, B, T, H_, dHead_, a.q);
  splitHeads(a.k_flat, B, T, Hkv_, dHead_, a.k);
  splitHeads(a.v_flat, B, T, Hkv_, dHead_, a.v);

  const bool rotary = positional_.rotaryPairs() > 0 && variant_->usesDotScores();
  if (rotary) {
    positional_.rotaryAngles(layer_, x, pos, B, T, a.angles);
    rotateHeads(a.q, a.angles, B, H_, T, dHead_, false);
    rotateHeads(a.k, a.angles, B, Hkv_, T, dHead_, false);
  } else {
    a.angles.resize(0, 0);
  }
  a.bias.clear();
  if (positional_.scoreBias()) {
    a.bias.assign(static_cast<size_t>(H_) * T * T, 0.0f);
    for (int h = 0; h < H_; ++h) positional_.addScoreBias(h, H_, pos, T, pos, T, a.bias.data() + static_cast<size_t>(h) * T * T);
  }

  a.scores.resize(a.shape.mapSize());
  a.weights.resize(a.shape.mapSize());
  a.o.resize(a.shape.qSize());
  AttentionInputs in = {a.shape, a.q.data(), a.k.data(), a.v.data(), pos, a.bias.empty() ? nullptr : a.bias.data(),
                        nullptr, 1.0f / std::sqrt(static_cast<float>(dHead_))};
  AttentionOutputs out = {a.o.data(), a.scores.data(), a.weights.data()};
  variant_->forward(in, out);
  mergeHeads(a.o.data(), B, T, H_, dHead_, a.o_flat);
  ops::linearForward(a.o_flat, wo_->value, nullptr, y);
}

void AttentionLayer::backward(const Mat& x, const Mat& dy, const int* pos, int B, int T, AttentionActs& a, Mat& dx) {
  Mat dOFlat;
  ops::linearBackward(dy, a.o_flat, wo_->value, &dOFlat, wo_->grad, nullptr);  // from y = o_flat Wo^T
  std::vector<float> dO, dQ(a.shape.qSize()), dK(a.shape.kvSize()), dV(a.shape.kvSize());
  splitHeads(dOFlat, B, T, H_, dHead_, dO);  // from o_flat = merge(o)

  AttentionInputs in = {a.shape, a.q.data(), a.k.data(), a.v.data(), pos, a.bias.empty() ? nullptr : a.bias.data(),
                        nullptr, 1.0f / std::sqrt(static_cast<float>(dHead_))};
  AttentionOutputs saved = {a.o.data(), a.scores.data(), a.weights.data()};
  AttentionGrads grads = {dO.data(), dQ.data(), dK.data(), dV.data(), nullptr};
  variant_->backward(in, saved, grads);

  Mat dAngles;
  if (a.angles.size()) {
    if (positional_.rotaryAnglesNeedGradient()) {  // from q = R(angle) q_pre, k = R(angle) k_pre
      dAngles = Mat::Zero(a.angles.rows(), a.angles.cols());
      angleGradient(dQ, a.q, a.angles, B, H_, T, dHead_, dAngles);
      angleGradient(dK, a.k, a.angles, B, Hkv_, T, dHead_, dAngles);
    }
    // from q = R(angle) q_pre: dq_pre = R(-angle) dq
    rotateHeads(dQ, a.angles, B, H_, T, dHead_, true);
    rotateHeads(dK, a.angles, B, Hkv_, T, dHead_, true);
  }
  Mat dQFlat, dKFlat, dVFlat, dxPart;
  mergeHeads(dQ.data(), B, T, H_, dHead_, dQFlat);
  mergeHeads(dK.data(), B, T, Hkv_, dHead_, dKFlat);
  mergeHeads(dV.data(), B, T, Hkv_, dHead_, dVFlat);
  ops::linearBackward(dQFlat, x, wq_->value, &dx, wq_->grad, nullptr);  // from q_flat = x Wq^T
  ops::linearBackward(dKFlat, x, wk_->value, &dxPart, wk_->grad, nullptr);
  dx += dxPart;
  ops::linearBackward(dVFlat, x, wv_->value, &dxPart, wv_->grad, nullptr);
  dx += dxPart;
  if (dAngles.size()) positional_.rotaryAnglesBackward(layer_, x, dAngles, B, T, dx);
}

void AttentionLayer::capture(const AttentionActs& a, LayerTrace& trace) const {
  const int T = a.shape.T;
  trace.variant = variantName_;
  trace.heads.resize(H_);
  for (int h = 0; h < H_; ++h) {
    HeadTrace& ht = trace.heads[h];
    const size_t mapOff = static_cast<size_t>(h) * T * T;  // batch element 0
    ht.scores = ConstMatMap(a.scores.data() + mapOff, T, T);
    ht.weights = ConstMatMap(a.weights.data() + mapOff, T, T);
    ht.q = ConstMatMap(a.q.data() + static_cast<size_t>(h) * T * dHead_, T, dHead_);
    const int kvh = h / (H_ / Hkv_);
    ht.k = ConstMatMap(a.k.data() + static_cast<size_t>(kvh) * T * dHead_, T, dHead_);
    ht.v = ConstMatMap(a.v.data() + static_cast<size_t>(kvh) * T * dHead_, T, dHead_);
  }
}

}  // namespace attnlab
