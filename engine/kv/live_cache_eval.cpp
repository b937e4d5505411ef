#include "kv/live_cache_eval.h"

#include <cmath>
#include <stdexcept>

#include "kv/decoder.h"

namespace attnlab {

Batch heldOutSequences(const Task& task, int count, int seqLen, uint64_t seed) {
  Rng rng(seed ^ 0x5bd1e9955bd1e995ull);
  return task.sample(count, seqLen, Split::Validation, rng);
}

LiveCacheResult evaluateLiveCache(const Model& model, const Batch& sequences, const LiveCacheSetup& setup,
                                  const std::vector<int>* matched) {
  const int L = model.config().n_layers, Hkv = model.config().kvHeads();
  const size_t perStep = static_cast<size_t>(L) * Hkv;
  const size_t steps = static_cast<size_t>(sequences.B) * sequences.T;
  if (matched && matched->size() != steps * perStep)
    throw std::invalid_argument("the matched live counts come from other sequences or another model shape");
  Decoder decoder(model, makeEvictionPolicy(setup.policy, setup.settings, model.config()), setup.policy,
                  matched ? Budget{} : setup.budget, matched != nullptr, setup.quant);
  LiveCacheResult result;
  result.liveCounts.assign(steps * perStep, 0);
  double lossSum = 0, live = 0, seen = 0, bytes = 0;
  std::vector<int> exact(perStep);
  for (int b = 0; b < sequences.B; ++b) {
    decoder.reset();
    for (int t = 0; t < sequences.T; ++t) {
      const size_t step = static_cast<size_t>(b) * sequences.T + t;
      if (matched) std::copy_n(matched->data() + step * perStep, perStep, exact.begin());
      const Mat& logits = decoder.step(sequences.inputs[step], matched ? &exact : nullptr);
      bytes += static_cast<double>(decoder.record().bytes);
      for (const HeadOccupancy& h : decoder.record().heads) {
        const int count = static_cast<int>(h.live.size());
        result.liveCounts[step * perStep + static_cast<size_t>(h.layer) * Hkv + h.kvHead] = count;
        live += count;
        seen += t + 1;
      }
      const int target = sequences.targets[step];
      if (target < 0) continue;
      // -log softmax(logits)[target], in double
      const float top = logits.maxCoeff();
      double sum = 0;
      for (Eigen::Index v = 0; v < logits.cols(); ++v) sum += std::exp(static_cast<double>(logits(0, v) - top));
      lossSum += std::log(sum) - (logits(0, target) - top);
      ++result.tokens;
    }
  }
  result.loss = result.tokens ? lossSum / result.tokens : 0;
  result.perplexity = std::exp(result.loss);
  result.liveShare = seen > 0 ? live / seen : 1.0;
  result.meanBytes = steps ? bytes / static_cast<double>(steps) : 0;
  return result;
}

}  // namespace attnlab
