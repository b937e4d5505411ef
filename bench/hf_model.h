#pragma once
// Workload "gpt2": a model opened from a Hugging Face folder (bench/hf_gpt2_peer.py writes a
// GPT-2-small-shaped one with random weights): prefill time, cached decoding speed and peak memory.
#include <nlohmann/json.hpp>
#include <string>

namespace attnlab::bench {

// Opens `dir`, times `passes` forward passes over `prefill` tokens (median ms) and cached decoding
// of `decode` tokens after a `prefill`-token prompt (tokens/s), and reports peak resident memory
// beside the float32 weights' size. Throws std::runtime_error with the loader's reason.
nlohmann::json timeHfModel(const std::string& dir, int threads, int prefill, int decode, int passes);

}  // namespace attnlab::bench
