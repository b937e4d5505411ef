#include "variants.h"

#include <sstream>
#include <stdexcept>

#include "attention/attention.h"
#include "io/config_json.h"
#include "train/benchmark.h"
#include "train/trainer.h"

namespace attnlab::bench {

namespace {
nlohmann::json spreadJson(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::vector<std::string> variantNames(const std::string& names) {
  std::vector<std::string> out;
  if (names == "all") {
    for (const auto& e : AttentionRegistry::instance().entries()) out.push_back(e.name);
    return out;
  }
  std::stringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    if (!AttentionRegistry::instance().create(name))
      throw std::invalid_argument("unknown attention variant '" + name + "' (known: " + AttentionRegistry::instance().names() + ")");
    out.push_back(name);
  }
  return out;
}

// The median tokens/s of `steps` timed training steps of the default preset with `variant`, or
// the reason it does not build there.
Spread timeVariant(const std::string& variant, int threads, int warmup, int steps, std::string& error) {
  ExperimentConfig config;
  if (std::string why = loadPreset("default", config); !why.empty()) throw std::invalid_argument(why);
  config.model.attention = {variant};
  config.train.threads = threads;
  prepareForTiming(config, warmup, steps);
  if (error = validate(config); !error.empty()) return {};
  try {
    Trainer trainer(config);
    return spreadOf(timeTrainingSteps(trainer, warmup, steps).tokens_per_second);
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
}
}  // namespace

std::vector<nlohmann::json> timeVariants(const std::string& names, int threads, int warmup, int steps) {
  const std::vector<std::string> variants = variantNames(names);
  std::string error;
  const Spread first = timeVariant("softmax", threads, warmup, steps, error);
  if (!error.empty()) throw std::invalid_argument("softmax does not train on the default preset: " + error);
  std::vector<nlohmann::json> lines;
  for (const std::string& variant : variants) {
    const Spread s = variant == "softmax" ? first : timeVariant(variant, threads, warmup, steps, error);
    nlohmann::json line = {{"side", "attnlab"}, {"kind", "variant_training"}, {"variant", variant}, {"threads", threads}, {"steps", steps}};
    if (!error.empty() && variant != "softmax") {
      line["error"] = error;
    } else {
      line["tokens_per_second"] = spreadJson(s);
      line["ratio_to_softmax"] = s.median / first.median;
    }
    lines.push_back(line);
  }
  const Spread last = timeVariant("softmax", threads, warmup, steps, error);  // the reference again: the drift
  lines.push_back({{"side", "attnlab"}, {"kind", "variant_training_reference"}, {"variant", "softmax"},
                   {"first_median", first.median}, {"last_median", last.median}});
  return lines;
}

}  // namespace attnlab::bench
