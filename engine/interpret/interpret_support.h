#pragma once
// Shared by the causal analyses: prompt checks and the weights they read by name.
#include <string>
#include <vector>

#include "model/model.h"

namespace attnlab {

// Throws std::invalid_argument when `tokens` is empty, longer than the context or out of range.
void checkPrompt(const ModelConfig& config, const std::vector<int>& tokens, const std::string& what);

// A parameter's value by name; throws std::invalid_argument naming it when the model has none.
const Mat& paramValue(const Model& model, const std::string& name);

// Per head, the matrices that read from and write to the residual stream, in float64, with the
// reading side's LayerNorm weight folded in (W diag(g)): q, k, v are [d_head, d_model], o is
// [d_model, d_head]. Under grouped or shared projections each query head gets its KV head's k, v.
struct HeadWeights {
  Eigen::MatrixXd q, k, v, o;
};
// For a cross-layer KV reader, k and v are its group's first layer's maps (of that layer's input).
HeadWeights headWeights(const Model& model, int layer, int head);
// The unembedding [vocab, d_model] with the final norm's weight folded in, and the embedding [vocab, d_model].
Eigen::MatrixXd foldedUnembedding(const Model& model);
Eigen::MatrixXd embedding(const Model& model);

}  // namespace attnlab
