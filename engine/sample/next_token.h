#pragma once
// The next token from one row of logits, as samplers in the Hugging Face tools define it: softmax
// of logits / temperature, restricted to the top-k tokens, then to the smallest set of the most
// likely whose mass (after the top-k cut, renormalised) reaches top-p (nucleus sampling), then
// renormalised. Greedy decoding takes the most likely token. generateTokens continues a sequence
// with one full forward pass per new token, as `attnlab-cli generate` does without a KV policy.
#include <functional>
#include <string>
#include <vector>

#include "core/random.h"
#include "model/model.h"

namespace attnlab {

struct SamplingSettings {
  double temperature = 1.0;  // > 0
  int topK = 0;              // keep the k most likely; 0: all
  double topP = 1.0;         // keep the most likely until their mass reaches p, in (0, 1]; 1: all
  bool greedy = false;       // pickToken takes the most likely token (the distribution is still as set)

  std::string check() const;  // "" or a one-line reason
};

struct TokenChance {
  int token = 0;
  double probability = 0;  // in the restricted, renormalised distribution
  double full = 0;         // softmax(logits / temperature) over the whole vocabulary
  float logit = 0;
};

struct NextTokenDistribution {
  std::vector<TokenChance> kept;  // most likely first (ties: the lower id first)
  double keptMass = 0;            // the kept tokens' share of the full softmax
  int vocab = 0;
};

// Throws std::invalid_argument when the settings fail check() or `vocab` < 1.
NextTokenDistribution nextTokenDistribution(const float* logits, int vocab, const SamplingSettings& settings);
int mostLikelyToken(const float* logits, int vocab);  // ties: the lower id
// Greedy: mostLikelyToken. Otherwise one uniform draw, walking the kept tokens in id order.
int pickToken(const float* logits, int vocab, const SamplingSettings& settings, Rng& rng);

// Appends `count` tokens to `sequence` (not empty), each from a full forward pass over at most the
// model's context (past it the window slides). `stop` is asked before each token; true ends early.
// Returns the number of tokens appended.
int generateTokens(const Model& model, std::vector<int>& sequence, int count, const SamplingSettings& settings, Rng& rng,
                   const std::function<bool()>& stop = {});

}  // namespace attnlab
