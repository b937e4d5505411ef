#pragma once
// Speed of the causal toolkit (engine/interpret/), one JSON line per figure:
// - "hooks_free": forward passes of the induction preset's model with no hook set against passes
//   with a hook set that wants no site (interleaved in one run), median ms each;
// - "resid_sweep": a full residual patching sweep ((layers + 1) x positions patches) of the
//   induction preset's model on a prompt of its sequence length (target < 2 s);
// - "gpt2_head_patching": per-head patching (layers x heads patches) of a GPT-2-small-shaped model
//   (768 wide, 12 layers, 12 heads, 50257 vocab, random weights) on a 20-token prompt pair
//   (target < 60 s on 2 cores).
// Speed does not depend on the weights, so the induction model is not trained here.
#include <nlohmann/json.hpp>
#include <vector>

namespace attnlab::bench {

std::vector<nlohmann::json> timeInterpret(int threads, int passes, bool gpt2);

}  // namespace attnlab::bench
