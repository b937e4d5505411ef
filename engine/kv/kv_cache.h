#pragma once
// The decoding cache: per layer and KV head, the live entries only (evicted ones are gone), each
// with its key and value rows (after rotation), absolute position, gate values and the attention
// it has received. Positions travel with the entries, so rotary and bias encodings stay correct
// after eviction. Plus the step record a KV-occupancy view draws: per layer and head which
// positions are live, which were evicted this step and by which rule, and the bytes held.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kv/row_store.h"

namespace attnlab {

// One KV head's live entries, in insertion (= position) order. With grouped heads, `group` query
// heads read it, so gates and attention statistics come per query head of the group.
struct HeadCache {
  int dHead = 0, group = 1;
  // [n, d_head] rows in the cache's format; with valuesAreKeys (the stored values would equal the
  // stored keys: one shared projection, no rotation of keys alone, no value gate) only keys are held
  RowStore keys, values;
  bool valuesAreKeys = false;
  // latent KV: the head holds no rows, its layer's latents (KvCache::latents) stand for them
  bool rowsInLayer = false;
  std::vector<int> positions;       // [n]
  std::vector<float> retention;     // [n, group] retention gate g per query head, empty without the gate
  std::vector<float> keyGate;       // [group, n] what the variant receives (g * p), empty without key gates
  std::vector<float> accumulated;   // [n] attention received, summed over past queries and the group's heads
  std::vector<float> latest;        // [n] attention from the latest query, mean over the group's heads

  int size() const { return static_cast<int>(positions.size()); }
  // Formats the (empty) head: how its rows are stored.
  void setFormat(KvQuant quant, bool sharedValues);
  // Keys and values as floats [n, d_head], decoded into the scratch buffers when quantised.
  const float* readKeys(std::vector<float>& scratch) const { return keys.read(scratch); }
  const float* readValues(std::vector<float>& scratch) const { return valuesAreKeys ? keys.read(scratch) : values.read(scratch); }
  size_t bytes() const { return keys.bytes() + values.bytes(); }
  // Largest retention gate over the group's heads: the entry is needed while any head keeps it.
  float gate(int i) const;
  const float* keyGateOf(int headInGroup) const { return keyGate.empty() ? nullptr : keyGate.data() + static_cast<size_t>(headInGroup) * size(); }
  // Appends one entry (its rows unless rowsInLayer); retention [group] and keyGate [group] may be null.
  void append(const float* key, const float* value, int position, const float* retentionOfGroup, const float* keyGateOfGroup);
  // Keeps the entries with keep[i] != 0, in order.
  void compact(const std::vector<char>& keep);
  void clear();
};

struct Eviction {
  int position = 0;
  std::string rule;  // e.g. "window: older than the most recent B", "learned_gate: g < threshold"
};

// Why a live entry stays, as the KV view names it: by its score, or protected as one of the
// first positions (sinks) or the recent window, or kept by the score of a learned gate.
enum class KeptAs : uint8_t { score, sink, recent, gate };

// One layer and KV head after a decoding step.
struct HeadOccupancy {
  int layer = 0, kvHead = 0;
  std::vector<int> live;           // positions held after this step's eviction
  std::vector<KeptAs> liveAs;      // [live] why each stays
  std::vector<Eviction> evicted;   // positions removed in this step
  size_t bytes = 0;
};

// Plain data, copyable to a UI thread as it is.
struct StepRecord {
  int position = 0, token = 0;
  std::vector<HeadOccupancy> heads;  // layers that cache K/V, every KV head (layer-major)
  size_t bytes = 0;                  // all live entries, the bytes the cache holds for them
  size_t stateBytes = 0;             // constant-size states of layers without a KV cache (linear attention)
  int liveEntries() const;
};

class KvCache {
 public:
  // Per layer: the storage format, and whether its values are its keys (then one tensor is held).
  struct LayerFormat {
    KvQuant quant = KvQuant::fp32;
    bool valuesAreKeys = false;
    int latentDim = 0;  // latent KV: the layer holds one latent row of this width per token, shared by its heads
  };
  KvCache(int layers, int kvHeads, int dHead, int group, const std::vector<LayerFormat>& formats);
  HeadCache& head(int layer, int kvHead) { return heads_[static_cast<size_t>(layer) * kvHeads_ + kvHead]; }
  const HeadCache& head(int layer, int kvHead) const { return heads_[static_cast<size_t>(layer) * kvHeads_ + kvHead]; }
  int layers() const { return layers_; }
  int kvHeads() const { return kvHeads_; }
  // What one entry of one KV head of `layer` costs: rowBytes per stored tensor (2, or 1 when K = V).
  // For a latent layer, what one token costs the whole layer: its latent row (counted with KV head 0).
  size_t bytesPerEntry(int layer) const;
  // The same for the first layer (the label the KV view shows; layers differ only in hybrids).
  size_t bytesPerEntry() const { return bytesPerEntry(0); }
  // The bytes a KV head's entries hold; a latent layer's latents count with its KV head 0.
  size_t bytes(int layer, int kvHead) const;
  // A latent layer's latents [n, latentDim], one per live token (empty for other layers).
  RowStore& latents(int layer) { return latents_[layer]; }
  const RowStore& latents(int layer) const { return latents_[layer]; }
  void clear();

 private:
  int layers_, kvHeads_, dHead_;
  std::vector<LayerFormat> formats_;
  std::vector<HeadCache> heads_;
  std::vector<RowStore> latents_;  // [layer]
};

}  // namespace attnlab
