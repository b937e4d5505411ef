#include "kv/kv_cache.h"

#include <algorithm>

namespace attnlab {

float HeadCache::gate(int i) const {
  if (retention.empty()) return 1.0f;
  const float* g = retention.data() + static_cast<size_t>(i) * group;
  return *std::max_element(g, g + group);
}

void HeadCache::setFormat(KvQuant quant, bool sharedValues) {
  keys = RowStore(quant, dHead);
  values = RowStore(quant, dHead);
  valuesAreKeys = sharedValues;
}

void HeadCache::append(const float* key, const float* value, int position, const float* retentionOfGroup,
                       const float* keyGateOfGroup) {
  if (!keys.rowBytes()) setFormat(KvQuant::fp32, valuesAreKeys);  // a head made by hand: plain floats
  if (!rowsInLayer) {
    keys.append(key);
    if (!valuesAreKeys) values.append(value);
  }
  positions.push_back(position);
  if (retentionOfGroup) retention.insert(retention.end(), retentionOfGroup, retentionOfGroup + group);
  if (keyGateOfGroup) {  // [group, n] -> [group, n + 1]: each head's row gains one value at its end
    const int n = size() - 1;
    std::vector<float> grown(static_cast<size_t>(group) * (n + 1));
    for (int g = 0; g < group; ++g) {
      std::copy_n(keyGate.data() + static_cast<size_t>(g) * n, n, grown.data() + static_cast<size_t>(g) * (n + 1));
      grown[static_cast<size_t>(g) * (n + 1) + n] = keyGateOfGroup[g];
    }
    keyGate.swap(grown);
  }
  accumulated.push_back(0.0f);
  latest.push_back(0.0f);
}

void HeadCache::compact(const std::vector<char>& keep) {
  const int n = size();
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    positions[kept] = positions[i];
    if (!retention.empty()) std::copy_n(retention.data() + static_cast<size_t>(i) * group, group, retention.data() + static_cast<size_t>(kept) * group);
    accumulated[kept] = accumulated[i];
    latest[kept] = latest[i];
    ++kept;
  }
  if (!keyGate.empty()) {
    std::vector<float> shrunk;
    shrunk.reserve(static_cast<size_t>(group) * kept);
    for (int g = 0; g < group; ++g)
      for (int i = 0; i < n; ++i)
        if (keep[i]) shrunk.push_back(keyGate[static_cast<size_t>(g) * n + i]);
    keyGate.swap(shrunk);
  }
  if (!rowsInLayer) {
    keys.compact(keep);
    if (!valuesAreKeys) values.compact(keep);
  }
  positions.resize(kept);
  if (!retention.empty()) retention.resize(static_cast<size_t>(kept) * group);
  accumulated.resize(kept);
  latest.resize(kept);
}

void HeadCache::clear() {
  keys.clear();
  values.clear();
  positions.clear();
  retention.clear();
  keyGate.clear();
  accumulated.clear();
  latest.clear();
}

int StepRecord::liveEntries() const {
  int total = 0;
  for (const auto& h : heads) total += static_cast<int>(h.live.size());
  return total;
}

KvCache::KvCache(int layers, int kvHeads, int dHead, int group, const std::vector<LayerFormat>& formats)
    : layers_(layers), kvHeads_(kvHeads), dHead_(dHead), formats_(formats), heads_(static_cast<size_t>(layers) * kvHeads) {
  formats_.resize(layers);
  latents_.resize(layers);
  for (int l = 0; l < layers; ++l) {
    if (formats_[l].latentDim > 0) latents_[l] = RowStore(formats_[l].quant, formats_[l].latentDim);
    for (int h = 0; h < kvHeads; ++h) {
      HeadCache& c = head(l, h);
      c.dHead = dHead;
      c.group = group;
      c.setFormat(formats_[l].quant, formats_[l].valuesAreKeys);
      c.rowsInLayer = formats_[l].latentDim > 0;
    }
  }
}

size_t KvCache::bytes(int layer, int kvHead) const {
  return head(layer, kvHead).bytes() + (kvHead == 0 ? latents_[layer].bytes() : 0);
}

size_t KvCache::bytesPerEntry(int layer) const {
  if (layer < 0 || layer >= layers_) return 0;
  if (formats_[layer].latentDim > 0) return RowStore::rowBytes(formats_[layer].quant, formats_[layer].latentDim);
  return (formats_[layer].valuesAreKeys ? 1 : 2) * RowStore::rowBytes(formats_[layer].quant, dHead_);
}

void KvCache::clear() {
  for (auto& h : heads_) h.clear();
  for (auto& l : latents_) l.clear();
}

}  // namespace attnlab
