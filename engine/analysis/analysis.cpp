#include "analysis/analysis.h"

#include <stdexcept>

namespace attnlab {

std::vector<Batch> validationBatches(const Trainer& trainer, int batches, uint64_t seed) {
  Rng rng(seed ^ 0x5851f42d4c957f2dull);  // a stream of its own, apart from training and evaluation
  std::vector<Batch> out;
  for (int n = 0; n < batches; ++n)
    out.push_back(trainer.task().sample(trainer.config().train.batch, trainer.sequenceLength(), Split::Validation, rng));
  return out;
}

std::vector<std::pair<int, int>> selectedHeads(const ModelConfig& config, const AnalysisOptions& options) {
  if (options.layer >= config.n_layers)
    throw std::invalid_argument("--layer " + std::to_string(options.layer) + " is out of range (the model has " +
                                std::to_string(config.n_layers) + " layers, numbered from 0)");
  if (options.head >= config.n_heads)
    throw std::invalid_argument("--head " + std::to_string(options.head) + " is out of range (the model has " +
                                std::to_string(config.n_heads) + " heads per layer, numbered from 0)");
  std::vector<std::pair<int, int>> out;
  for (int l = 0; l < config.n_layers; ++l)
    for (int h = 0; h < config.n_heads; ++h)
      if ((options.layer < 0 || options.layer == l) && (options.head < 0 || options.head == h)) out.push_back({l, h});
  return out;
}

}  // namespace attnlab
