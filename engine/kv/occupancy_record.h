#pragma once
// A generation through the KV cache as the KV-cache view draws it: a known prompt decoded one
// token per step, then greedy new tokens, under one or several eviction policies. For every step
// and every layer / KV head it records which positions are live, which left at that step and by
// which rule, which are sink positions or kept by the learned gate; per step the live entries,
// the bytes held and (where the next token is known) the teacher-forced loss. Runs compare at the
// same budget, or under the matched live-cache protocol: every later run keeps, at every step,
// layer and KV head, exactly as many entries as the first run kept (see live_cache_eval.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/settings.h"
#include "model/model.h"

namespace attnlab {

struct OccupancyRunSpec {
  std::string policy;         // an EvictionPolicyRegistry name
  std::string budget;         // "N", "R%" or "" (none: the policy decides alone, or keeps everything)
  std::string scope = "head"; // "head" or "layer"
  Settings settings;          // the policy's own settings (sinks, windows, thresholds); absent keys: defaults
};

struct OccupancyRequest {
  std::vector<int> prompt;
  std::vector<int> targets;  // [prompt] the known token after each prompt position, -1 where unknown
  int generate = 0;          // greedy tokens after the prompt
  std::vector<OccupancyRunSpec> runs;  // runs[0] is the reference of the matched protocol
  bool matched = false;      // later runs replay runs[0]'s live counts ('full' always keeps everything)
};

enum class CellState : uint8_t { NotYet, Live, Sink, KeptRecent, KeptByGate, EvictedNow, EvictedEarlier };

// One layer and KV head of one run: a steps x steps raster, row = step, column = position.
struct HeadRaster {
  std::vector<CellState> cells;
  std::vector<uint8_t> rule;  // for EvictedNow cells: index into OccupancyRun::rules
  std::vector<float> gate;    // retention gate g of live cells (NaN elsewhere); empty without the gate
};

struct OccupancyRun {
  OccupancyRunSpec spec;
  std::string budget;         // as applied: "4 per head", "keeps all" (full), "no budget", "matched to h2o"
  bool matched = false;       // followed the first run's live counts
  bool dense = false;         // the policy is the dense reference (keeps everything)
  std::vector<int> tokens;    // [steps] fed at each step: the prompt, then this run's own greedy tokens
  std::vector<std::string> rules;   // every eviction rule this run applied ("window: older than ...")
  std::vector<HeadRaster> heads;    // [layer * kvHeads + kvHead]; empty rasters for layers without a cache
  std::vector<int> liveEntries;     // [step] over every caching layer and KV head
  std::vector<int> headLive;        // [step][layer][kvHead] flattened: what the matched protocol replays
  std::vector<size_t> bytes;        // [step] all live entries
  std::vector<double> loss;         // [step] -log p(known next token), NaN where unknown
  size_t stateBytes = 0;            // constant-size states of layers that decode without a cache
  std::string label() const;        // "window, 4 per head"
};

struct OccupancyRecord {
  int steps = 0, promptLength = 0, layers = 0, kvHeads = 0, group = 1;
  size_t bytesPerEntry = 0;
  std::vector<char> cachesLayer;  // [layer]
  std::vector<OccupancyRun> runs;

  size_t cell(int step, int position) const { return static_cast<size_t>(step) * steps + position; }
  const HeadRaster& raster(int run, int layer, int kvHead) const { return runs[run].heads[static_cast<size_t>(layer) * kvHeads + kvHead]; }
};

// Throws std::invalid_argument with a one-line reason: a bad policy name, budget or scope, a
// policy that needs a budget, a model that cannot decode (momentum), an empty prompt, a sequence
// longer than the model's context.
OccupancyRecord recordOccupancy(const Model& model, const OccupancyRequest& request);

}  // namespace attnlab
