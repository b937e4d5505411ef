#pragma once
// Perplexity with eviction (the soft-to-hard eviction paper's live-cache evaluation): held-out sequences are decoded
// token by token through the cache, teacher-forced, so the next-token loss at every position is
// computed from the entries that are live at that step only. The matched protocol replays a
// recorded run's live counts: at every step, layer and KV head a post-hoc policy keeps exactly as
// many entries as, for instance, a learned gate kept.
#include <string>
#include <vector>

#include "core/settings.h"
#include "data/task.h"
#include "kv/eviction_policy.h"
#include "model/model.h"

namespace attnlab {

struct LiveCacheSetup {
  std::string policy = "full";
  Settings settings;  // the policy's settings
  Budget budget;      // unlimited by default
  KvQuant quant = KvQuant::fp32;  // how the cache stores keys and values
};

struct LiveCacheResult {
  double loss = 0;        // mean next-token cross-entropy over scored positions
  double perplexity = 0;  // exp(loss)
  long tokens = 0;        // scored positions
  // Time-averaged cache size relative to keeping everything: the sum over steps, caching layers
  // and KV heads of live entries, divided by the same sum of positions seen.
  double liveShare = 1;
  double meanBytes = 0;  // bytes the cache held after a step, averaged over every step decoded
  // Entries each caching layer's KV head kept after each step, [sequence][step][layer][kvHead]
  // flattened (0 for layers without a cache): what the matched protocol replays.
  std::vector<int> liveCounts;
};

// Validation sequences of the task, drawn from their own stream so that every model and policy
// sees the same text. Throws std::invalid_argument as Task::sample does.
Batch heldOutSequences(const Task& task, int count, int seqLen, uint64_t seed);

// Throws std::invalid_argument (one line) on a bad policy, budget or model (see Decoder).
// matched: a liveCounts of an earlier run on the same sequences and model shape; the budget is
// then replaced by those counts.
LiveCacheResult evaluateLiveCache(const Model& model, const Batch& sequences, const LiveCacheSetup& setup,
                                  const std::vector<int>* matched = nullptr);

}  // namespace attnlab
