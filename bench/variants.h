#pragma once
// Training throughput of attention variants on the default preset's shape, relative to softmax:
// the "throughput of each new variant" check of issue 17, measured in one process.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnlab::bench {

// `names`: comma-separated variant names, or "all" for every registered one. Softmax is measured
// too (first) as the reference. One line per variant: "kind": "variant_training", "variant",
// "tokens_per_second" (median/min/max over the steps) and "ratio_to_softmax" (of the medians), or
// "error" with the one-line reason a variant gave for not building in this shape.
// Variants run one after another (a trainer each, freed before the next); the reference softmax
// runs first and again last, and its two medians are reported, so a drift in load shows.
// Throws std::invalid_argument on an unknown name.
std::vector<nlohmann::json> timeVariants(const std::string& names, int threads, int warmup, int steps);

}  // namespace attnlab::bench
