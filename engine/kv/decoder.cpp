#include "kv/decoder.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/projection_sharing.h"

namespace attnlab {

namespace {
// Per layer: the cache's format, and whether the stored values equal the stored keys (one shared
// projection, and nothing turns or gates one of them alone: no rotation of keys without values, no
// value gate); only then is one tensor held. A latent-KV layer holds its latents instead.
std::vector<KvCache::LayerFormat> cacheFormats(const Model& model, KvQuant quant) {
  const ModelConfig& c = model.config();
  const auto sharing = projectionSharingOf(c.projection_sharing);
  std::vector<KvCache::LayerFormat> formats;
  for (int l = 0; l < c.n_layers; ++l) {
    const AttentionLayer& layer = model.attentionLayer(l);
    const bool rotatesKeysAlone = layer.rotary() && !layer.positional().rotatesValues();
    std::vector<float> q, k;  // whether the variant filters its keys (momentum): then they differ from the values
    const bool filtersKeys = layer.variant().filterDecodeInputs(q, k, {}, {});
    const int latentDim = layer.variant().cachesKeysAndValues() ? layer.latentDim() : 0;
    formats.push_back({quant, sharing && sharing->valueIsKey && !c.value_gate && !rotatesKeysAlone && !filtersKeys, latentDim});
  }
  return formats;
}

// KV head kvh's columns of expanded rows [n, Hkv*d_head], as a [n, d_head] block in `out`.
const float* headColumns(const Mat& rows, int kvh, int dHead, std::vector<float>& out) {
  out.resize(static_cast<size_t>(rows.rows()) * dHead);
  for (Eigen::Index i = 0; i < rows.rows(); ++i)
    std::copy_n(rows.row(i).data() + static_cast<size_t>(kvh) * dHead, dHead, out.data() + static_cast<size_t>(i) * dHead);
  return out.data();
}
}  // namespace

Decoder::Decoder(const Model& model, std::unique_ptr<EvictionPolicy> policy, const std::string& policyName, Budget budget,
                 bool matched, KvQuant quant)
    : model_(model),
      policy_(std::move(policy)),
      policyName_(policyName),
      budget_(budget),
      H_(model.config().n_heads),
      Hkv_(model.config().kvHeads()),
      dHead_(model.config().headDim()),
      group_(H_ / Hkv_),
      cache_(model.config().n_layers, Hkv_, dHead_, H_ / Hkv_, cacheFormats(model, quant)) {
  const int L = model.config().n_layers;
  if (policy_->needsBudget() && budget_.kind == Budget::Kind::unlimited && !matched)
    throw std::invalid_argument("eviction policy '" + policyName_ + "' needs a budget (a count such as 32 or a ratio such as 25%)");
  if (policy_->isDenseReference() && (budget_.kind != Budget::Kind::unlimited || matched))
    throw std::invalid_argument("eviction policy '" + policyName_ + "' keeps every entry and takes no budget");
  caches_.resize(L);
  filtersInputs_.resize(L);
  states_.resize(L);
  angleSums_.resize(L);
  previousQ_.resize(L);
  previousK_.resize(L);
  for (int l = 0; l < L; ++l) {
    const AttentionVariant& variant = model.attentionLayer(l).variant();
    caches_[l] = variant.cachesKeysAndValues();
    std::vector<float> noQ, noK;  // asked with nothing to filter, a variant says whether it filters
    filtersInputs_[l] = variant.filterDecodeInputs(noQ, noK, {}, {});
    if (caches_[l] && model.attentionLayer(l).latentDim() > 0) {
      if (!policy_->isDenseReference())
        throw std::invalid_argument("latent KV holds one latent per token for all heads of a layer: eviction policy '" +
                                    policyName_ + "' evicts per head, so only the dense reference decodes it");
      if (filtersInputs_[l])  // keys expanded from latents are never filtered ones
        throw std::invalid_argument("attention variant '" + model.config().attentionOf(l) +
                                    "' filters its keys while decoding, which keys expanded from cached latents cannot be");
    }
    if (caches_[l] && model.attentionLayer(l).readsSharedKv()) {
      if (filtersInputs_[l])  // a reader's queries would be filtered against keys it never computes
        throw std::invalid_argument("attention variant '" + model.config().attentionOf(l) +
                                    "' filters its keys while decoding, which a layer reading another layer's cached keys cannot do");
    }
    if (!caches_[l]) {
      for (int hd = 0; hd < H_; ++hd) {
        states_[l].push_back(variant.recurrentState(hd, dHead_));
        if (!states_[l].back())
          throw std::invalid_argument("attention variant '" + model.config().attentionOf(l) + "' (layer " + std::to_string(l) +
                                      ") has neither a KV cache nor a recurrent state to decode from");
      }
      continue;
    }
    const std::vector<float> zeros(dHead_, 0.0f);
    std::vector<float> o(dHead_);
    DecodeRowInputs probe;
    probe.q = zeros.data();
    probe.dHead = dHead_;
    if (!variant.decodeRow(probe, o.data(), nullptr))
      throw std::invalid_argument("attention variant '" + model.config().attentionOf(l) + "' (layer " + std::to_string(l) +
                                  ") cannot decode from a KV cache yet");
  }
}

void Decoder::reset() {
  cache_.clear();
  for (auto& layer : states_)
    for (auto& s : layer) s->reset();
  for (auto& a : angleSums_) std::fill(a.begin(), a.end(), 0.0);
  for (auto& q : previousQ_) q.clear();
  for (auto& k : previousK_) k.clear();
  position_ = 0;
  policy_->reset();
  record_ = {};
}

const Mat& Decoder::step(int token, const std::vector<int>* exactCounts) {
  if (policy_->needsBudget() && budget_.kind == Budget::Kind::unlimited && !exactCounts)
    throw std::invalid_argument("eviction policy '" + policyName_ + "' needs a budget or matched counts");
  token_ = token;
  model_.decodeToken(token, position_, [this](int l, const Mat& x, const Mat& h, Mat& y) { attend(l, x, h, y); }, logits_);
  record_.position = position_;
  record_.token = token;
  record_.bytes = record_.stateBytes = 0;
  recordedHeads_ = 0;
  for (int l = 0; l < cache_.layers(); ++l) {
    if (caches_[l]) {
      if (!model_.attentionLayer(l).readsSharedKv()) evict(l, exactCounts);  // a reader holds no entries of its own
    } else
      for (const auto& s : states_[l]) record_.stateBytes += s->bytes();
  }
  record_.heads.resize(recordedHeads_);
  ++position_;
  return logits_;
}

void Decoder::attend(int l, const Mat& x, const Mat& h, Mat& y) {
  const AttentionLayer& layer = model_.attentionLayer(l);
  layer.decodeToken(x, h, token_, position_, angleSums_[l], piece_);
  if (filtersInputs_[l]) {  // a variant that scores filtered q, k (momentum) filters this token's from the previous one's
    std::vector<float> q = piece_.q, k = piece_.k;
    layer.variant().filterDecodeInputs(piece_.q, piece_.k, previousQ_[l], previousK_[l]);
    previousQ_[l].swap(q);
    previousK_[l].swap(k);
  }
  const DecodeToken& t = piece_;
  heads_.setZero(1, static_cast<Eigen::Index>(H_) * dHead_);
  // key gate of this token for query head hd: g_hd * p (each factor 1 when absent), as forward builds it
  auto keyGate = [&](int hd) { return (t.retention.empty() ? 1.0f : t.retention[hd]) * t.presence; };
  if (!caches_[l]) {  // a recurrent state: add this token to each head's state, then read it
    for (int hd = 0; hd < H_; ++hd) {
      const size_t kv = static_cast<size_t>(hd / group_) * dHead_;
      states_[l][hd]->step(t.q.data() + static_cast<size_t>(hd) * dHead_, t.k.data() + kv, t.v.data() + kv,
                          heads_.data() + static_cast<size_t>(hd) * dHead_, layer.hasKeyGate() ? keyGate(hd) : 1.0f);
    }
    layer.decodeOutput(x, t, heads_, y);
    return;
  }
  const PositionalEncoding& positional = layer.positional();
  const bool latent = layer.latentDim() > 0;
  Mat expandedKeys, expandedValues;  // latent KV: [n, Hkv*d_head] from the cached latents
  if (latent) {
    RowStore& latents = cache_.latents(l);
    latents.append(t.latent.data());
    layer.expandLatents(latents.read(latentScratch_), latents.rows(), expandedKeys, expandedValues);
  }
  // cross-layer KV: a reader attends over its source layer's entries (this token's included, the
  // source ran first), adds none and leaves the attention statistics to the source's own queries
  const bool reader = layer.readsSharedKv();
  groupGate_.resize(group_);
  for (int kvh = 0; kvh < Hkv_; ++kvh) {
    HeadCache& hc = cache_.head(layer.kvSource(), kvh);
    for (int g = 0; g < group_; ++g) groupGate_[g] = keyGate(kvh * group_ + g);
    if (!reader)
      hc.append(t.k.data() + static_cast<size_t>(kvh) * dHead_, t.v.data() + static_cast<size_t>(kvh) * dHead_, position_,
              t.retention.empty() ? nullptr : t.retention.data() + static_cast<size_t>(kvh) * group_,
              layer.hasKeyGate() ? groupGate_.data() : nullptr);
    const int n = hc.size();
    const float* keys = latent ? headColumns(expandedKeys, kvh, dHead_, keyScratch_) : hc.readKeys(keyScratch_);
    const float* values = latent ? headColumns(expandedValues, kvh, dHead_, valueScratch_)
                                 : hc.valuesAreKeys ? keys : hc.readValues(valueScratch_);
    weights_.assign(static_cast<size_t>(group_) * n, 0.0f);
    for (int g = 0; g < group_; ++g) {
      const int hd = kvh * group_ + g;
      if (positional.scoreBias()) {
        bias_.assign(n, 0.0f);
        positional.addScoreBias(hd, H_, &position_, 1, hc.positions.data(), n, bias_.data());
      }
      DecodeRowInputs in;
      in.q = t.q.data() + static_cast<size_t>(hd) * dHead_;
      in.k = keys;
      in.v = values;
      in.key_positions = hc.positions.data();
      in.bias = positional.scoreBias() ? bias_.data() : nullptr;
      in.key_gate = hc.keyGateOf(g);
      in.n = n;
      in.dHead = dHead_;
      in.head = hd;
      in.query_position = position_;
      in.scale = layer.scoreScale();
      in.precision = layer.precision();
      layer.variant().decodeRow(in, heads_.data() + static_cast<size_t>(hd) * dHead_, weights_.data() + static_cast<size_t>(g) * n);
    }
    for (int i = 0; i < n && !reader; ++i) {  // statistics the attention-based policies read
      float sum = 0;
      for (int g = 0; g < group_; ++g) sum += weights_[static_cast<size_t>(g) * n + i];
      hc.accumulated[i] += sum;
      hc.latest[i] = sum / group_;
    }
  }
  layer.decodeOutput(x, t, heads_, y);
}

void Decoder::evict(int l, const std::vector<int>* exactCounts) {
  if (policy_->isDenseReference()) {  // keeps every entry (the constructor refused it a budget): nothing to score
    for (int kvh = 0; kvh < Hkv_; ++kvh) {
      HeadOccupancy& occ = recordOccupancy(l, kvh);
      occ.liveAs.assign(occ.live.size(), policy_->scoredAs());
    }
    return;
  }
  const int seen = position_ + 1;
  const bool budgeted = exactCounts || budget_.kind != Budget::Kind::unlimited;
  std::vector<HeadView> views;
  for (int kvh = 0; kvh < Hkv_; ++kvh) {
    int budget = exactCounts ? (*exactCounts)[static_cast<size_t>(l) * Hkv_ + kvh] : budget_.entriesFor(seen);
    if (budgeted && !exactCounts) budget = policy_->layerBudget(budget, l, cache_.layers());
    views.push_back(HeadView{cache_.head(l, kvh), l, kvh, position_, budget, budgeted});
  }
  const bool pooled = budget_.perLayer || policy_->poolsHeads();
  const std::vector<KeepDecision> decisions = chooseKept(*policy_, views, pooled, exactCounts != nullptr);
  std::string budgetReason, dropReason;  // built at the first entry each explains, not once per entry
  auto reason = [&](bool dropped) -> const std::string& {
    std::string& r = dropped ? dropReason : budgetReason;
    if (r.empty()) r = policyName_ + ": " + (dropped ? policy_->dropRule() : policy_->budgetRule());
    return r;
  };
  for (int kvh = 0; kvh < Hkv_; ++kvh) {
    HeadCache& hc = cache_.head(l, kvh);
    const KeepDecision& d = decisions[kvh];
    std::vector<Eviction> evicted;
    std::vector<KeptAs> liveAs;
    for (int i = 0; i < hc.size(); ++i)
      if (!d.keep[i]) evicted.push_back({hc.positions[i], reason(d.dropped[i])});
    for (int i = 0; i < hc.size(); ++i)
      if (d.keep[i]) liveAs.push_back(d.protect[i] ? policy_->protectedAs() : policy_->scoredAs());
    if (!evicted.empty()) hc.compact(d.keep);
    HeadOccupancy& occ = recordOccupancy(l, kvh);
    occ.evicted = std::move(evicted);
    occ.liveAs = std::move(liveAs);
  }
}

HeadOccupancy& Decoder::recordOccupancy(int l, int kvh) {
  if (recordedHeads_ == record_.heads.size()) record_.heads.emplace_back();
  HeadOccupancy& occ = record_.heads[recordedHeads_++];  // last step's entry for this head: its storage is reused
  const HeadCache& hc = cache_.head(l, kvh);
  occ.layer = l;
  occ.kvHead = kvh;
  occ.evicted.clear();
  occ.live.assign(hc.positions.begin(), hc.positions.end());
  occ.bytes = cache_.bytes(l, kvh);
  record_.bytes += occ.bytes;
  return occ;
}

}  // namespace attnlab
