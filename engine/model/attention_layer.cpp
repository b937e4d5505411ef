#include "model/attention_layer.h"

#include <cmath>
#include <stdexcept>

#include "core/threads.h"
#include "model/cross_layer_kv.h"
#include "model/ops.h"
#include "model/projection_sharing.h"
#include "model/row_stable.h"

namespace attnlab {

// Both copy one batch element per thread: a training step moves [B T, d_model] a few times per layer.
void splitHeads(const Mat& flat, int B, int T, int heads, int d, std::vector<float>& out) {
  out.resize(static_cast<size_t>(B) * heads * T * d);
  forEachIndex(B, true, [&](int b) {
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < T; ++t)
        std::copy_n(flat.data() + (static_cast<size_t>(b) * T + t) * heads * d + h * d, d,
                    out.data() + ((static_cast<size_t>(b) * heads + h) * T + t) * d);
  });
}

void mergeHeads(const float* headMajor, int B, int T, int heads, int d, Mat& flat) {
  flat.resize(static_cast<Eigen::Index>(B) * T, heads * d);
  forEachIndex(B, true, [&](int b) {
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < T; ++t)
        std::copy_n(headMajor + ((static_cast<size_t>(b) * heads + h) * T + t) * d, d,
                    flat.data() + (static_cast<size_t>(b) * T + t) * heads * d + h * d);
  });
}

namespace {
// Rotates every [T, d_head] block of a head-major buffer by its batch element's angles, whose
// cosines and sines are computed once for all heads.
void rotateHeads(std::vector<float>& x, const Mat& angles, int B, int heads, int T, int dHead, bool inverse) {
  const int pairs = static_cast<int>(angles.cols());
  const size_t perBatch = static_cast<size_t>(T) * pairs;
  const float sign = inverse ? -1.0f : 1.0f;
  thread_local std::vector<float> cosines, sines;
  cosines.resize(perBatch);
  sines.resize(perBatch);
  for (int b = 0; b < B; ++b) {
    const float* a = angles.data() + b * perBatch;
    for (size_t i = 0; i < perBatch; ++i) {
      cosines[i] = std::cos(a[i]);
      sines[i] = sign * std::sin(a[i]);
    }
    for (int h = 0; h < heads; ++h)
      rotatePairsBy(x.data() + (static_cast<size_t>(b) * heads + h) * T * dHead, T, dHead, cosines.data(), sines.data(), pairs);
  }
}

// Rotates each head's slice of every token row of a [B*T, heads*d_head] matrix by that token's angles.
void rotateTokenRows(Mat& flat, const Mat& angles, int heads, int dHead, bool inverse) {
  const int pairs = static_cast<int>(angles.cols());
  for (Eigen::Index r = 0; r < flat.rows(); ++r)
    for (int h = 0; h < heads; ++h) rotatePairs(flat.row(r).data() + h * dHead, 1, dHead, angles.row(r).data(), pairs, inverse);
}

// Query head h reads KV head h / group: out[b, h] = kv[b, h / group] (queries shared with keys).
void repeatKvHeads(const std::vector<float>& kv, int B, int T, int Hkv, int group, int dHead, std::vector<float>& out) {
  const size_t block = static_cast<size_t>(T) * dHead;
  out.resize(kv.size() * group);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hkv * group; ++h)
      std::copy_n(kv.data() + (static_cast<size_t>(b) * Hkv + h / group) * block, block,
                  out.data() + (static_cast<size_t>(b) * Hkv * group + h) * block);
}

// Backward of repeatKvHeads: dkv[b, g] += the sum of d(out) over the group's heads.
void addRepeatedHeadGrads(const std::vector<float>& dOut, int B, int T, int Hkv, int group, int dHead, std::vector<float>& dkv) {
  const size_t block = static_cast<size_t>(T) * dHead;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < Hkv * group; ++h) {
      const float* src = dOut.data() + (static_cast<size_t>(b) * Hkv * group + h) * block;
      float* dst = dkv.data() + (static_cast<size_t>(b) * Hkv + h / group) * block;
      for (size_t i = 0; i < block; ++i) dst[i] += src[i];
    }
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

// What the variant writes and its backward reads: the maps, or the row figures that replace them.
AttentionOutputs outputsOf(AttentionActs& a) {
  if (a.attended_without_maps)
    return {a.o.data(), nullptr, nullptr, a.row_log_sum_exp.data(), a.row_entropy.data(), a.row_max_abs_score.data()};
  return {a.o.data(), a.scores.data(), a.weights.data()};
}

}  // namespace

AttentionLayer::AttentionLayer(const ModelConfig& config, int layer, const PositionalEncoding& positional, ParamStore& params)
    : layer_(layer),
      H_(config.n_heads),
      Hkv_(config.kvHeads()),
      dHead_(config.headDim()),
      kvSource_(config.kvSourceOf(layer)),
      variantName_(config.attentionOf(layer)),
      positional_(positional) {
  variant_ = AttentionRegistry::instance().create(variantName_);
  if (!variant_)
    throw std::invalid_argument("unknown attention variant '" + variantName_ + "' (known: " +
                                AttentionRegistry::instance().names() + ")");
  if (!parseScorePrecision(config.score_precision, precision_))
    throw std::invalid_argument("unknown score precision '" + config.score_precision + "' (known: " + scorePrecisionNames() + ")");
  const auto sharing = projectionSharingOf(config.projection_sharing);
  if (!sharing)
    throw std::invalid_argument("unknown projection sharing '" + config.projection_sharing + "' (known: " +
                                kProjectionSharingNames + ")");
  const auto outputGate = outputGateKindOf(config.output_gate);
  if (!outputGate) throw std::invalid_argument("unknown output gate '" + config.output_gate + "' (known: " + kOutputGateNames + ")");
  if (const std::string why = validateLatentKv(config); !why.empty()) throw std::invalid_argument(why);
  if (const std::string why = validateCrossLayerKv(config); !why.empty()) throw std::invalid_argument(why);
  const std::string prefix = "blocks." + std::to_string(layer) + ".attn.";
  const int d = config.d_model;
  // Projection sharing: a tensor per projection that exists, named by the roles it plays (wk, wkv, wqk or wqkv).
  const std::string keyRoles = std::string(sharing->queryIsKey ? "q" : "") + "k" + (sharing->valueIsKey ? "v" : "");
  if (!sharing->queryIsKey) wq_ = &params.add(prefix + "wq.weight", {H_ * dHead_, d});
  if (sharing->latent) {
    addLatentParams(config, prefix, params);
  } else if (!readsSharedKv()) {  // a cross-layer KV reader has no key or value projection
    wk_ = &params.add(prefix + "w" + keyRoles + ".weight", {Hkv_ * dHead_, d});
    if (!sharing->valueIsKey) wv_ = &params.add(prefix + "wv.weight", {Hkv_ * dHead_, d});
  }
  wo_ = &params.add(prefix + "wo.weight", {d, H_ * dHead_});
  if (config.qkv_bias) {  // a bias per projection tensor, named like its weight
    if (wq_) bq_ = &params.add(prefix + "wq.bias", {H_ * dHead_}, false);
    if (wk_ && !wdkv_) bk_ = &params.add(prefix + "w" + keyRoles + ".bias", {Hkv_ * dHead_}, false);
    if (wv_ && !wdkv_) bv_ = &params.add(prefix + "wv.bias", {Hkv_ * dHead_}, false);
  }
  if (config.out_bias) bo_ = &params.add(prefix + "wo.bias", {d}, false);
  const std::string why = variant_->configure(config, prefix, params);
  if (!why.empty()) throw std::invalid_argument(why);

  valueGate_ = config.value_gate;
  rowStable_ = variant_->needsPresence();
  if (variant_->needsPresence()) presenceTau_ = static_cast<float>(settingOr(config.attention_settings, presenceTauSpec()));
  if (*outputGate != OutputGateKind::none) outputGate_ = std::make_unique<OutputGate>(*outputGate, H_, dHead_, d, prefix, params);
  if (config.retention_gate)  // the sparsity lambda is spread over the layers: lambda * mean over all of them
    retention_ = std::make_unique<RetentionGate>(H_, d, config.retention_sparsity / config.n_layers, prefix, params);
}

AttentionLayer::~AttentionLayer() = default;

void AttentionLayer::initialise(Rng& rng, float residualStd) {
  // latent KV: the up-projections at 1/sqrt(d_c), so k = W_UK c starts at the scale W_k x has
  const float upStd = wdkv_ ? 1.0f / std::sqrt(static_cast<float>(latentDim())) : 0.02f;
  for (Param* p : {wq_, wdkv_, wk_, wv_})
    if (p)
      for (Eigen::Index i = 0; i < p->value.size(); ++i)
        p->value.data()[i] = rng.normal(0.f, wdkv_ && (p == wk_ || p == wv_) ? upStd : 0.02f);
  for (Eigen::Index i = 0; i < wo_->value.size(); ++i) wo_->value.data()[i] = rng.normal(0.f, residualStd);
  variant_->initialise(rng);
  if (outputGate_) outputGate_->initialise(rng);
  if (retention_) retention_->initialise(rng);
}

void AttentionLayer::project(const Mat& in, const Param& W, const Param* b, Mat& out) const {
  const Mat* bias = b ? &b->value : nullptr;
  if (rowStable_) linearForwardRowStable(in, W.value, bias, out);
  else ops::linearForward(in, W.value, bias, out);
}

// The retention gate and presence as key gates: key_gate[b, h, t] = g[b, h, t] * p[b*T + t]
// (each factor 1 when absent).
double AttentionLayer::keyGateForward(const Mat& x, const Mat& h, int B, int T, AttentionActs& a) const {
  a.presence.clear();
  a.retention.clear();
  a.key_gate.clear();
  double aux = 0;
  if (presenceTau_ > 0) presenceForward(h, presenceTau_, a.presence);
  if (retention_) aux = retention_->forward(x, B, T, a.retention, rowStable_);
  if (a.presence.empty() && a.retention.empty()) return aux;
  a.key_gate = retention_ ? a.retention : std::vector<float>(a.shape.mapSize() / T, 1.0f);
  if (!a.presence.empty())
    for (int b = 0; b < B; ++b)
      for (int hd = 0; hd < H_; ++hd)
        for (int t = 0; t < T; ++t) a.key_gate[(static_cast<size_t>(b) * H_ + hd) * T + t] *= a.presence[b * T + t];
  return aux;
}

void AttentionLayer::keyGateBackward(const Mat& x, const AttentionActs& a, const std::vector<float>& dKeyGate, int B, int T,
                                     Mat& dx, std::vector<float>& dPresence) {
  // from key_gate = g * p: dg = d(key_gate) p; dp_t = sum over heads of d(key_gate) g
  std::vector<float> dG = dKeyGate;
  if (!a.presence.empty())
    for (int b = 0; b < B; ++b)
      for (int hd = 0; hd < H_; ++hd)
        for (int t = 0; t < T; ++t) {
          const size_t i = (static_cast<size_t>(b) * H_ + hd) * T + t;
          dPresence[b * T + t] += dKeyGate[i] * (retention_ ? a.retention[i] : 1.0f);
          dG[i] *= a.presence[b * T + t];
        }
  if (retention_) retention_->backward(x, a.retention, dG, B, T, dx);
}

// Presence as receiver (o_i *= p_i), then the output gate (o_i *= gate_i), on the merged head outputs.
void AttentionLayer::gateOutputs(const Mat& x, AttentionActs& a) const {
  if (a.presence.empty() && !outputGate_) return;
  a.o_ungated = a.o_flat;
  if (!a.presence.empty())
    a.o_flat.array().colwise() *= Eigen::Map<const Eigen::ArrayXf>(a.presence.data(), static_cast<Eigen::Index>(a.presence.size()));
  if (outputGate_) outputGate_->forward(x, a.o_flat, a.out_gate, rowStable_);
}

void AttentionLayer::gateOutputsBackward(const Mat& x, const AttentionActs& a, Mat& dOFlat, Mat& dx, std::vector<float>& dPresence) {
  if (a.presence.empty() && !outputGate_) return;
  const Eigen::Map<const Eigen::ArrayXf> p(a.presence.data(), static_cast<Eigen::Index>(a.presence.size()));
  if (outputGate_) {
    Mat received = a.o_ungated;  // the output gate's input, o after receiver presence
    if (p.size()) received.array().colwise() *= p;
    outputGate_->backward(x, received, a.out_gate, dOFlat, dx);
  }
  if (p.size()) {  // from o_i = p_i u_i: dp_i += dO_i . u_i, du_i = p_i dO_i
    for (Eigen::Index t = 0; t < p.size(); ++t) dPresence[t] += dOFlat.row(t).dot(a.o_ungated.row(t));
    dOFlat.array().colwise() *= p;
  }
}

double AttentionLayer::forward(const Mat& x, const Mat& h, const int* pos, int B, int T, AttentionActs& a, Mat& y) const {
  a.shape = {B, T, H_, Hkv_, dHead_};
  a.dk_from_readers.clear();
  a.dv_from_readers.clear();
  const bool ownKv = !readsSharedKv();
  if (wdkv_) project(x, *wdkv_, nullptr, a.latent);  // latent KV: c = W_DKV x, the keys' and values' input
  const Mat& kvIn = wdkv_ ? a.latent : x;
  if (ownKv) {
    project(kvIn, *wk_, bk_, a.k_flat);  // shared roles reuse the key projection
    splitHeads(a.k_flat, B, T, Hkv_, dHead_, a.k);
  } else {
    readSourceKv(a);  // cross-layer KV: the source's k, v, already gated and rotated
  }
  if (wq_) {
    project(x, *wq_, bq_, a.q_flat);
    splitHeads(a.q_flat, B, T, H_, dHead_, a.q);
  } else {
    repeatKvHeads(a.k, B, T, Hkv_, H_ / Hkv_, dHead_, a.q);
  }
  if (wv_) {
    project(kvIn, *wv_, bv_, a.v_flat);
    splitHeads(a.v_flat, B, T, Hkv_, dHead_, a.v);
  } else if (ownKv) {
    a.v = a.k;
  }
  if (valueGate_ && ownKv) {  // the value gate: v <- sigmoid(v)
    valueGateForward(a.v);
    a.v_gated = a.v;
  }

  const bool rotary = positional_.rotaryPairs() > 0 && variant_->usesDotScores();
  if (rotary) {
    positional_.tokenRotaryAngles(layer_, x, a.tokens, pos, B, T, a.angles);
    rotateHeads(a.q, a.angles, B, H_, T, dHead_, false);
    if (ownKv) rotateHeads(a.k, a.angles, B, Hkv_, T, dHead_, false);
    if (ownKv && positional_.rotatesValues()) rotateHeads(a.v, a.angles, B, Hkv_, T, dHead_, false);  // value rotation: v_j turned by phi_j
  } else {
    a.angles.resize(0, 0);
  }
  hookHeads(a.hooks, HookSite::attn_q, layer_, a.q, B, T, H_);
  hookHeads(a.hooks, HookSite::attn_k, layer_, a.k, B, T, Hkv_);
  hookHeads(a.hooks, HookSite::attn_v, layer_, a.v, B, T, Hkv_);
  a.bias.clear();
  if (positional_.scoreBias()) {
    a.bias.assign(static_cast<size_t>(H_) * T * T, 0.0f);
    for (int h = 0; h < H_; ++h) positional_.addScoreBias(h, H_, pos, T, pos, T, a.bias.data() + static_cast<size_t>(h) * T * T);
  }

  const double aux = keyGateForward(x, h, B, T, a);

  a.o.resize(a.shape.qSize());
  AttentionInputs in = {a.shape, a.q.data(), a.k.data(), a.v.data(), pos, a.bias.empty() ? nullptr : a.bias.data(),
                        a.key_gate.empty() ? nullptr : a.key_gate.data(), 1.0f / std::sqrt(static_cast<float>(dHead_)), precision_};
  a.attended_without_maps = a.maps_optional && variant_->attendsWithoutMaps(in);
  const size_t rows = static_cast<size_t>(B) * H_ * T;
  if (a.attended_without_maps) {  // the maps' memory goes (a trace's earlier pass may have left them)
    std::vector<float>().swap(a.scores);
    std::vector<float>().swap(a.weights);
    for (auto* row : {&a.row_log_sum_exp, &a.row_entropy, &a.row_max_abs_score}) row->resize(rows);
  } else {
    a.scores.resize(a.shape.mapSize());
    a.weights.resize(a.shape.mapSize());
    for (auto* row : {&a.row_log_sum_exp, &a.row_entropy, &a.row_max_abs_score}) row->clear();
  }
  AttentionOutputs out = outputsOf(a);
  variant_->forward(in, out);
  if (a.hooks) hookPattern(a.hooks, layer_, variantName_, a);
  mergeHeads(a.o.data(), B, T, H_, dHead_, a.o_flat);
  // value rotation: o_i turned back by -phi_i (a.o keeps the variant's own output for its backward)
  if (rotary && positional_.rotatesValues()) rotateTokenRows(a.o_flat, a.angles, H_, dHead_, true);
  gateOutputs(x, a);
  if (!headGains_.empty()) {
    a.o_before_head_gains = a.o_flat;
    for (int hd = 0; hd < H_; ++hd) a.o_flat.middleCols(hd * dHead_, dHead_) *= headGains_[hd];
  }
  hookRows(a.hooks, HookSite::attn_head_out, layer_, a.o_flat, B, T, H_);
  project(a.o_flat, *wo_, bo_, y);
  return aux;
}

void AttentionLayer::backward(const Mat& x, const Mat& h, const Mat& dy, const int* pos, int B, int T, AttentionActs& a,
                              Mat& dx, Mat& dh) {
  Mat dOFlat;
  ops::linearBackward(dy, a.o_flat, wo_->value, &dOFlat, wo_->grad, bo_ ? &bo_->grad : nullptr);  // from y = o_flat Wo^T
  for (int hd = 0; hd < static_cast<int>(headGains_.size()); ++hd) {  // from o_flat[h] = g_h o[h]
    auto dHeadOut = dOFlat.middleCols(hd * dHead_, dHead_);
    headGainGrad_[hd] += dHeadOut.cwiseProduct(a.o_before_head_gains.middleCols(hd * dHead_, dHead_)).cast<double>().sum();
    dHeadOut *= headGains_[hd];
  }
  Mat dxGates;  // the gates' share of dx, added once dx is assigned
  if (outputGate_ || !a.key_gate.empty()) dxGates.setZero(x.rows(), x.cols());
  std::vector<float> dPresence(a.presence.size(), 0.0f);
  gateOutputsBackward(x, a, dOFlat, dxGates, dPresence);
  std::vector<float> dO, dQ(a.shape.qSize()), dK(a.shape.kvSize()), dV(a.shape.kvSize());
  const bool rotateValues = a.angles.size() && positional_.rotatesValues();
  Mat dAngles;
  if (a.angles.size() && positional_.rotaryAnglesNeedGradient()) dAngles = Mat::Zero(a.angles.rows(), a.angles.cols());
  if (rotateValues) rotateTokenRows(dOFlat, a.angles, H_, dHead_, false);  // from o_flat = R(-phi) merge(o)
  splitHeads(dOFlat, B, T, H_, dHead_, dO);  // from o_flat = merge(o)
  if (rotateValues && dAngles.size()) {
    // from o_flat = R(-phi) o: d(loss)/d(phi) = -dO.J o with the turned-back dO (rotations commute with J)
    angleGradient(dO, a.o, a.angles, B, H_, T, dHead_, dAngles);
    dAngles = -dAngles;
  }

  AttentionInputs in = {a.shape, a.q.data(), a.k.data(), a.v.data(), pos, a.bias.empty() ? nullptr : a.bias.data(),
                        a.key_gate.empty() ? nullptr : a.key_gate.data(), 1.0f / std::sqrt(static_cast<float>(dHead_)), precision_};
  const AttentionOutputs saved = outputsOf(a);
  std::vector<float> dKeyGate(a.key_gate.size());
  AttentionGrads grads = {dO.data(), dQ.data(), dK.data(), dV.data(), a.key_gate.empty() ? nullptr : dKeyGate.data()};
  variant_->backward(in, saved, grads);
  if (!a.key_gate.empty()) keyGateBackward(x, a, dKeyGate, B, T, dxGates, dPresence);
  const bool ownKv = !readsSharedKv();
  if (ownKv) addReadersKvGrads(a, dK, dV);  // cross-layer KV: the readers' dK, dV join the source's
  else sendKvGradsToSource(dK, dV, a);

  if (a.angles.size()) {
    if (dAngles.size()) {  // from q = R(angle) q_pre, k = R(angle) k_pre
      angleGradient(dQ, a.q, a.angles, B, H_, T, dHead_, dAngles);
      if (ownKv) angleGradient(dK, a.k, a.angles, B, Hkv_, T, dHead_, dAngles);
      if (ownKv && rotateValues) angleGradient(dV, a.v, a.angles, B, Hkv_, T, dHead_, dAngles);  // from v = R(angle) v_pre
    }
    // from q = R(angle) q_pre: dq_pre = R(-angle) dq
    rotateHeads(dQ, a.angles, B, H_, T, dHead_, true);
    if (ownKv) rotateHeads(dK, a.angles, B, Hkv_, T, dHead_, true);
    if (ownKv && rotateValues) rotateHeads(dV, a.angles, B, Hkv_, T, dHead_, true);
  }
  if (valueGate_ && ownKv) valueGateBackward(a.v_gated, dV);  // from v = sigmoid(v_pre)
  // Projection sharing: roles that share the key projection send their gradients to it
  if (!wq_) addRepeatedHeadGrads(dQ, B, T, Hkv_, H_ / Hkv_, dHead_, dK);  // from q[h] = k[h / group]
  if (!wv_ && ownKv)
    for (size_t i = 0; i < dK.size(); ++i) dK[i] += dV[i];  // from v = k
  Mat dFlat, dxPart;
  if (!ownKv) {
    dx.setZero(x.rows(), x.cols());  // a reader's x reaches only its queries
  } else if (wdkv_) {
    latentBackward(dK, dV, x, a, B, T, dx);
  } else {
    mergeHeads(dK.data(), B, T, Hkv_, dHead_, dFlat);
    ops::linearBackward(dFlat, x, wk_->value, &dx, wk_->grad, bk_ ? &bk_->grad : nullptr);  // from k_flat = x Wk^T
  }
  if (wq_) {
    mergeHeads(dQ.data(), B, T, H_, dHead_, dFlat);
    ops::linearBackward(dFlat, x, wq_->value, &dxPart, wq_->grad, bq_ ? &bq_->grad : nullptr);  // from q_flat = x Wq^T
    dx += dxPart;
  }
  if (wv_ && !wdkv_) {
    mergeHeads(dV.data(), B, T, Hkv_, dHead_, dFlat);
    ops::linearBackward(dFlat, x, wv_->value, &dxPart, wv_->grad, bv_ ? &bv_->grad : nullptr);  // from v_flat = x Wv^T
    dx += dxPart;
  }
  if (dxGates.size()) dx += dxGates;
  if (!dPresence.empty()) presenceBackward(h, presenceTau_, dPresence, dh);  // from p = |h|^2 / (tau + |h|^2)
  if (dAngles.size()) positional_.rotaryAnglesBackward(layer_, x, dAngles, B, T, dx);
}

bool AttentionLayer::trainsWithoutMaps() const {
  const float gate = 1.0f;  // only whether there is a key gate matters, not its values
  AttentionInputs in;
  in.shape = {1, 1, H_, Hkv_, dHead_};
  in.key_gate = hasKeyGate() ? &gate : nullptr;
  in.precision = precision_;
  return variant_->attendsWithoutMaps(in);
}

void AttentionLayer::setHeadGains(std::vector<float> gains) {
  if (!gains.empty() && static_cast<int>(gains.size()) != H_)
    throw std::invalid_argument("head gains list " + std::to_string(gains.size()) + " values for " + std::to_string(H_) + " heads");
  headGains_ = std::move(gains);
  headGainGrad_.assign(headGains_.size(), 0.0);
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
    if (!a.retention.empty()) ht.gate.assign(a.retention.begin() + h * T, a.retention.begin() + (h + 1) * T);
    if (!a.presence.empty()) ht.presence.assign(a.presence.begin(), a.presence.begin() + T);
    if (outputGate_) {
      const bool perHead = outputGate_->kind() == OutputGateKind::headwise;
      ht.output_gate.resize(T);
      for (int t = 0; t < T; ++t)
        ht.output_gate[t] = perHead ? a.out_gate(t, h) : a.out_gate.row(t).segment(h * dHead_, dHead_).mean();
    }
  }
}

}  // namespace attnlab
