// generate: autoregressive sampling from a saved model: one full forward pass per new token, or
// with --policy one decoding step per token through a KV cache that evicts by that policy.
#include <algorithm>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "cli_error.h"
#include "command.h"
#include "eviction_flags.h"
#include "format.h"
#include "kv/decoder.h"
#include "kv/kv_bytes.h"
#include "sample/next_token.h"
#include "opened_model.h"
#include "setup.h"

namespace attnlab::cli {
namespace {

// "0-3, 12, 14-20": sorted positions as ranges.
std::string ranges(const std::vector<int>& positions) {
  std::string out;
  for (size_t i = 0; i < positions.size();) {
    size_t j = i;
    while (j + 1 < positions.size() && positions[j + 1] == positions[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(positions[i]) + (j > i ? "-" + std::to_string(positions[j]) : "");
    i = j + 1;
  }
  return out;
}

// Decodes the prompt and the new tokens one step each through a cache; appends to `sequence` and
// fills `steps` (one JSON object per step) and `final` (the last step's record).
void generateWithCache(const Model& model, const LiveCacheSetup& setup, int count, const SamplingSettings& sampling, Rng& rng,
                       std::vector<int>& sequence, Json& steps, StepRecord& final) {
  try {
    Decoder decoder(model, makeEvictionPolicy(setup.policy, setup.settings, model.config()), setup.policy, setup.budget, false,
                    setup.quant);
    const size_t promptLength = sequence.size();
    for (size_t i = 0; i < promptLength + count - 1; ++i) {
      const Mat& logits = decoder.step(sequence[i]);
      const StepRecord& r = decoder.record();
      int evicted = 0;
      for (const HeadOccupancy& h : r.heads) evicted += static_cast<int>(h.evicted.size());
      steps.push_back({{"position", r.position}, {"live", r.liveEntries()}, {"evicted", evicted}, {"bytes", r.bytes}});
      if (i + 1 >= promptLength) sequence.push_back(pickToken(logits.data(), static_cast<int>(logits.cols()), sampling, rng));
    }
    final = decoder.record();
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what());
  }
}

void printOccupancy(const Model& model, const LiveCacheSetup& setup, const Json& steps, const StepRecord& final) {
  std::cout << "\nKV cache: policy " << setup.policy << ", budget " << setup.budget.describe() << ", " << kvQuantName(setup.quant) << "\n"
            << "position  live entries  evicted  bytes\n";
  for (const Json& s : steps)
    std::cout << std::string(8 - std::min<size_t>(8, std::to_string(s["position"].get<int>()).size()), ' ') << s["position"].get<int>()
              << std::string(14 - std::min<size_t>(14, std::to_string(s["live"].get<int>()).size()), ' ') << s["live"].get<int>()
              << std::string(9 - std::min<size_t>(9, std::to_string(s["evicted"].get<int>()).size()), ' ') << s["evicted"].get<int>()
              << "  " << s["bytes"].get<size_t>() << "\n";
  std::cout << "after the last step:\n";
  for (const HeadOccupancy& h : final.heads)
    std::cout << "  layer " << h.layer << " kv head " << h.kvHead << ": " << h.live.size() << " live (" << ranges(h.live) << "), "
              << h.bytes << " bytes\n";
  const size_t dense = kvCacheBytesPerToken(model.config()) * (final.position + 1);
  std::cout << "cache " << final.bytes << " bytes of " << dense << " in float32 without eviction ("
            << percent(dense ? static_cast<double>(final.bytes) / dense : 1.0) << ")";
  if (final.stateBytes) std::cout << ", plus " << final.stateBytes << " bytes of recurrent state (linear attention, DeltaNet)";
  std::cout << std::endl;
}

int runGenerate(const Args& args) {
  const int count = static_cast<int>(args.integer("tokens", 32, 1, 100000));
  const double temperature = args.number("temperature", 1.0, 0.0, 100.0);
  SamplingSettings sampling;
  sampling.greedy = temperature == 0;
  sampling.temperature = sampling.greedy ? 1.0 : temperature;
  sampling.topK = static_cast<int>(args.integer("top-k", 0, 0, std::numeric_limits<int>::max()));
  sampling.topP = args.number("top-p", 1.0, 1e-9, 1.0);
  const long long seed = args.integer("seed", 1, 0, std::numeric_limits<long long>::max());
  const OpenedModel opened = openAnyModel(args);
  const Model& model = opened.model();
  const Vocabulary& vocabulary = opened.vocabulary();
  const std::vector<int> prompt = tokensFrom(args, opened, "prompt");

  Rng rng(static_cast<uint64_t>(seed));
  std::vector<int> sequence = prompt;
  const bool cached = args.has("policy") || args.has("budget") || args.has("kv-quant");
  const LiveCacheSetup setup = evictionFromFlags(args);
  Json steps = Json::array();
  StepRecord final;
  if (cached) {
    generateWithCache(model, setup, count, sampling, rng, sequence, steps, final);
  } else {
    generateTokens(model, sequence, count, sampling, rng);
  }
  const std::vector<int> generated(sequence.begin() + prompt.size(), sequence.end());

  if (args.has("json")) {
    Json labels = Json::array();
    for (int id : generated) labels.push_back(vocabulary.token(id));
    Json out = {{"prompt_tokens", prompt},    {"tokens", generated},
                {"labels", labels},           {"text", vocabulary.decode(generated)},
                {"temperature", temperature}, {"top_k", sampling.topK},
                {"top_p", sampling.topP},     {"seed", seed}};
    if (cached) {
      Json heads = Json::array();
      for (const HeadOccupancy& h : final.heads)
        heads.push_back({{"layer", h.layer}, {"kv_head", h.kvHead}, {"live", h.live}, {"bytes", h.bytes}});
      out["cache"] = {{"policy", setup.policy},
                      {"budget", setup.budget.describe()},
                      {"kv_quant", kvQuantName(setup.quant)},
                      {"steps", steps},
                      {"heads", heads},
                      {"bytes", final.bytes},
                      {"dense_bytes", kvCacheBytesPerToken(model.config()) * (final.position + 1)},
                      {"dense_bytes_in_format", kvCacheBytesPerToken(model.config(), setup.quant) * (final.position + 1)},
                      {"state_bytes", final.stateBytes}};
    }
    // Sampled tokens can end inside a UTF-8 character: such bytes are shown as U+FFFD.
    std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << vocabulary.decode(sequence) << std::endl;
    if (cached) printOccupancy(model, setup, steps, final);
  }
  return 0;
}

}  // namespace

Command generateCommand() {
  return {"generate",
          "--model DIR (--prompt \"...\" | --ids 1,2,3) [--tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--policy NAME [--budget N|R%]\n"
          "    [--budget-scope head|layer] [--policy-set KEY=VALUE]...] [--json]",
          "continue a prompt by sampling from a saved model",
          {modelFlag(),
           {"prompt", "TEXT", "start of the sequence, in the task's vocabulary or a Hugging Face folder's tokenizer"},
           idsFlag(),
           {"tokens", "N", "tokens to generate (default 32)"},
           {"temperature", "T", "sampling temperature; 0 always picks the most likely token (default 1)"},
           {"top-k", "K", "sample among the K most likely tokens only (default 0: all)"},
           {"top-p", "P", "then among the most likely whose mass reaches P, renormalised (nucleus; default 1: all)"},
           {"seed", "S", "random seed for sampling (default 1)"},
           evictionFlags()[0], evictionFlags()[1], evictionFlags()[2], evictionFlags()[3], evictionFlags()[4],
           {"json", "", "print {prompt_tokens, tokens, labels, text, temperature, top_k, top_p, seed[, cache]} as one JSON object"}},
          "--model takes a lab checkpoint or a Hugging Face model folder (--prompt through its tokenizer, or --ids).\n"
          "Without --policy each new token runs the full forward pass over the sequence; past the model's\n"
          "context the window slides (only the most recent context tokens are seen).\n"
          "With --policy (and --budget where the policy needs one) every token, prompt included, is one\n"
          "decoding step through a KV cache that physically keeps only live entries: after each step's\n"
          "attention the policy evicts down to the budget. Occupancy (live entries, evictions, bytes) is\n"
          "printed per step, then the live positions of every layer and KV head. Positions are not\n"
          "recycled, so with learned positions prompt + tokens must fit the context.",
          runGenerate};
}

}  // namespace attnlab::cli
