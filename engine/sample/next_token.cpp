#include "sample/next_token.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "model/workspace.h"

namespace attnlab {

std::string SamplingSettings::check() const {
  if (!(temperature > 0) || !std::isfinite(temperature)) return "the temperature must be a positive number";
  if (topK < 0) return "top-k must be 0 (no limit) or more";
  if (!(topP > 0 && topP <= 1)) return "top-p must be in (0, 1]";
  return {};
}

NextTokenDistribution nextTokenDistribution(const float* logits, int vocab, const SamplingSettings& settings) {
  if (std::string why = settings.check(); !why.empty()) throw std::invalid_argument(why);
  if (vocab < 1) throw std::invalid_argument("there are no logits to sample from");
  // softmax(logits / T), the peak subtracted so exp never overflows.
  const double peak = *std::max_element(logits, logits + vocab);
  std::vector<double> full(vocab);
  double sum = 0;
  for (int i = 0; i < vocab; ++i) sum += full[i] = std::exp((logits[i] - peak) / settings.temperature);
  for (double& p : full) p /= sum;

  std::vector<int> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  const int k = settings.topK > 0 ? std::min(settings.topK, vocab) : vocab;
  const auto likelier = [&full](int a, int b) { return full[a] > full[b] || (full[a] == full[b] && a < b); };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), likelier);
  order.resize(k);

  // Top-p on the top-k distribution: the shortest prefix whose renormalised mass reaches p.
  double topKMass = 0;
  for (int t : order) topKMass += full[t];
  size_t keep = order.size();
  if (settings.topP < 1) {
    double running = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      running += full[order[i]] / topKMass;
      if (running >= settings.topP) {
        keep = i + 1;
        break;
      }
    }
  }
  order.resize(keep);

  NextTokenDistribution out;
  out.vocab = vocab;
  for (int t : order) out.keptMass += full[t];
  for (int t : order) out.kept.push_back({t, full[t] / out.keptMass, full[t], logits[t]});
  return out;
}

int mostLikelyToken(const float* logits, int vocab) { return static_cast<int>(std::max_element(logits, logits + vocab) - logits); }

int pickToken(const float* logits, int vocab, const SamplingSettings& settings, Rng& rng) {
  if (settings.greedy) return mostLikelyToken(logits, vocab);
  NextTokenDistribution d = nextTokenDistribution(logits, vocab, settings);
  std::sort(d.kept.begin(), d.kept.end(), [](const TokenChance& a, const TokenChance& b) { return a.token < b.token; });
  double u = rng.uniform();
  for (const TokenChance& c : d.kept) {
    u -= c.probability;
    if (u < 0) return c.token;
  }
  return d.kept.back().token;  // u fell in the rounding slack at the top
}

int generateTokens(const Model& model, std::vector<int>& sequence, int count, const SamplingSettings& settings, Rng& rng,
                   const std::function<bool()>& stop) {
  if (sequence.empty()) throw std::invalid_argument("generation needs at least one token to continue");
  if (std::string why = settings.check(); !why.empty()) throw std::invalid_argument(why);
  auto ws = makeWorkspace();
  int added = 0;
  for (; added < count; ++added) {
    if (stop && stop()) break;
    const int T = std::min<int>(sequence.size(), model.config().context);
    const std::vector<int> window(sequence.end() - T, sequence.end());
    const std::vector<int> noTargets(T, -1);
    model.forward(*ws, window.data(), noTargets.data(), 1, T);
    const Mat& logits = workspaceLogits(*ws);
    sequence.push_back(pickToken(logits.row(T - 1).data(), static_cast<int>(logits.cols()), settings, rng));
  }
  return added;
}

}  // namespace attnlab
