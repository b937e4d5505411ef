#pragma once
// Incremental decoding: one token per step through the model's own weights, attending over a
// KV cache that holds only live entries (layers of linear attention or DeltaNet keep their
// constant-size state instead). With nothing evicted the logits equal the full forward's (up to float summation
// order). After each step's attention the eviction policy trims every layer and KV head to its
// budget, and the step record says what is live, what left and why, and the bytes held.
#include <memory>
#include <vector>

#include "attention/recurrent_state.h"
#include "kv/eviction_policy.h"
#include "kv/kv_cache.h"
#include "model/attention_layer.h"
#include "model/model.h"

namespace attnlab {

class Decoder {
 public:
  // Throws std::invalid_argument (one line) when a layer's variant cannot decode from a cache, when the policy needs a budget and has none, or takes none and got one.
  // matched: every step() will get exact counts (the matched protocol), which stand in for a budget.
  // quant: how the cache stores keys and values (kv/row_store.h); attention reads the stored values.
  Decoder(const Model& model, std::unique_ptr<EvictionPolicy> policy, const std::string& policyName, Budget budget,
          bool matched = false, KvQuant quant = KvQuant::fp32);

  // Starts a new sequence at position 0 (empties the cache and the states).
  void reset();
  // Feeds the next token; returns the logits [1, vocab] for the token after it. With `exactCounts`
  // ([layers x kvHeads], layer-major), every head keeps exactly that many entries after this step
  // (the matched live-cache protocol), in place of the budget.
  const Mat& step(int token, const std::vector<int>* exactCounts = nullptr);

  const StepRecord& record() const { return record_; }
  const KvCache& cache() const { return cache_; }
  int position() const { return position_; }
  // Layers that keep a KV cache (the others decode from a constant state).
  bool cachesLayer(int layer) const { return caches_[layer]; }

 private:
  void attend(int layer, const Mat& x, const Mat& h, Mat& y);
  void evict(int layer, const std::vector<int>* exactCounts);
  // The next entry of this step's record, for KV head kvh of layer l after its eviction: what it
  // holds and its bytes (the caller says why each stays and what left).
  HeadOccupancy& recordOccupancy(int l, int kvh);

  const Model& model_;
  std::unique_ptr<EvictionPolicy> policy_;
  std::string policyName_;
  Budget budget_;
  int H_, Hkv_, dHead_, group_;
  std::vector<char> caches_;
  std::vector<char> filtersInputs_;  // [layer] the variant filters q, k against the previous token's (momentum)
  KvCache cache_;
  std::vector<std::vector<std::unique_ptr<RecurrentState>>> states_;  // [layer][query head], layers without a KV cache
  std::vector<std::vector<double>> angleSums_;              // [layer] running angles of accumulating rotations
  std::vector<std::vector<float>> previousQ_, previousK_;   // [layer] the last token's q, k before any filter (momentum)
  int position_ = 0, token_ = 0;
  DecodeToken piece_;
  std::vector<float> keyScratch_, valueScratch_;  // decoded rows of quantised caches, or keys and values expanded from latents
  std::vector<float> latentScratch_;              // decoded latents of a quantised latent cache
  // Buffers every step refills, kept so that a step allocates nothing once the cache stops growing.
  Mat heads_;                                       // [1, H*d_head] the attention output of each query head
  std::vector<float> groupGate_, bias_, weights_;   // one KV head's key gates, score biases and [group, n] weights
  Mat logits_;
  StepRecord record_;
  size_t recordedHeads_ = 0;  // entries of record_.heads this step has filled (the rest are last step's, reused)
};

}  // namespace attnlab
