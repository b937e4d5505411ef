#pragma once
// Cached decoding of the default model, single stream: tokens/s with the full cache and with each
// eviction policy of the registry at a fixed budget, measured in one process with the policies'
// passes interleaved so a drift in the machine's load hits them alike.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnlab::bench {

// One result line per policy ("side", "kind": "decoding", "policy", "budget", "model",
// "tokens_per_second" and "tokens_per_cpu_second" as median/min/max over the passes). A pass
// decodes the default task's probe (its 128 tokens, positions 0..127) one step per token from an
// empty cache. learned_gate needs a retention gate, so it runs on the default model with one and
// the full cache is measured on that model too ("model": "retention_gate").
// A last line ("kind": "decoding_bound") gives the bytes of weights a step reads and the tokens
// per second of one product over that many bytes alone: the bound a single stream cannot pass.
// `only`: measure that policy alone (for a profiler); "" measures all.
std::vector<nlohmann::json> timeDecoding(int passes, int budget, const std::string& only = "");

}  // namespace attnlab::bench
