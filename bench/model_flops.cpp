#include "model_flops.h"

#include <string>

#include "model/model.h"

namespace attnlab::bench {

double trainingFlopsPerToken(const ModelConfig& config, int T) {
  const auto shapes = Model::shapesOf(config);
  // A weight matrix [out, in] costs 2 out in per token forward (y = x W^T) and 4 out in backward
  // (dx = dy W and dW += dy^T x): 6 per weight. Embedding lookups are not products; the LM head is.
  double matrixWeights = static_cast<double>(config.vocab) * config.d_model;
  for (const auto& p : shapes->params().all())
    if (p->name.rfind("blocks.", 0) == 0 && p->shape.size() == 2) matrixWeights += static_cast<double>(p->shape[0]) * p->shape[1];
  // Attention per layer and head: S = Q K^T and O = A V, each 2 dHead FLOPs per visible key;
  // a causal query sees (T + 1) / 2 keys on average. Backward costs twice the forward.
  const double attention = 3.0 * config.n_layers * config.n_heads * 2 * (2.0 * config.headDim()) * (T + 1) / 2;
  return 6 * matrixWeights + attention;
}

}  // namespace attnlab::bench
