#include "interpret/interpret_support.h"

#include <stdexcept>

#include "interpret/interpretation.h"

namespace attnlab {
namespace {

const Param* findAny(const Model& model, const std::string& prefix, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (const Param* p = model.params().find(prefix + n)) return p;
  return nullptr;
}

// x -> x diag(g) for the norm weight g [1, d], when the model has that norm.
Eigen::MatrixXd foldNorm(Eigen::MatrixXd w, const Param* norm) {
  if (norm) w = w * norm->value.row(0).cast<double>().asDiagonal();
  return w;
}

}  // namespace

void checkPrompt(const ModelConfig& c, const std::vector<int>& tokens, const std::string& what) {
  if (tokens.empty()) throw std::invalid_argument("the " + what + " prompt is empty");
  if (static_cast<int>(tokens.size()) > c.context)
    throw std::invalid_argument("the " + what + " prompt has " + std::to_string(tokens.size()) + " tokens, more than the context of " +
                                std::to_string(c.context));
  for (int id : tokens)
    if (id < 0 || id >= c.vocab)
      throw std::invalid_argument("the " + what + " prompt holds token id " + std::to_string(id) + ", outside the vocabulary of " +
                                  std::to_string(c.vocab));
}

const Mat& paramValue(const Model& model, const std::string& name) {
  const Param* p = model.params().find(name);
  if (!p) throw std::invalid_argument("the model has no parameter '" + name + "'");
  return p->value;
}

HeadWeights headWeights(const Model& model, int layer, int head) {
  const ModelConfig& c = model.config();
  if (layer < 0 || layer >= c.n_layers || head < 0 || head >= c.n_heads)
    throw std::invalid_argument("head " + std::to_string(layer) + "." + std::to_string(head) + " is outside the model");
  const std::string prefix = "blocks." + std::to_string(layer) + ".attn.";
  const int dh = c.headDim(), kvHead = head / (c.n_heads / c.kvHeads());
  // cross-layer KV: a reader's keys and values are its group's first layer's maps of that layer's input
  const int kvLayer = c.kvSourceOf(layer);
  const std::string kvPrefix = "blocks." + std::to_string(kvLayer) + ".attn.";
  const Param* key = findAny(model, kvPrefix, {"wk.weight", "wkv.weight", "wqk.weight", "wqkv.weight", "wuk.weight"});
  const Param* query = findAny(model, prefix, {"wq.weight"});
  const Param* value = findAny(model, kvPrefix, {"wv.weight", "wuv.weight"});
  if (!key) throw std::invalid_argument("layer " + std::to_string(layer) + " has no key projection");
  const Param* latent = findAny(model, kvPrefix, {"wdkv.weight"});
  // latent KV: the key and value maps of x are W_UK W_DKV and W_UV W_DKV
  auto ofInput = [&](const Param& p) {
    const Eigen::MatrixXd rows = p.value.middleRows(kvHead * dh, dh).cast<double>();
    return latent ? Eigen::MatrixXd(rows * latent->value.cast<double>()) : rows;
  };
  const Param* norm = model.params().find("blocks." + std::to_string(layer) + ".ln1.weight");
  const Param* kvNorm = model.params().find("blocks." + std::to_string(kvLayer) + ".ln1.weight");
  HeadWeights w;
  w.k = foldNorm(ofInput(*key), kvNorm);
  w.q = query ? foldNorm(query->value.middleRows(head * dh, dh).cast<double>(), norm) : w.k;  // queries shared with keys
  w.v = value ? foldNorm(ofInput(*value), kvNorm) : w.k;
  w.o = paramValue(model, prefix + "wo.weight").middleCols(head * dh, dh).cast<double>();
  return w;
}

Eigen::MatrixXd foldedUnembedding(const Model& model) {
  const Param* head = model.params().find("head.weight");
  const Mat& u = head ? head->value : paramValue(model, "tok_emb.weight");
  return foldNorm(u.cast<double>(), model.params().find("ln_f.weight"));
}

Eigen::MatrixXd embedding(const Model& model) { return paramValue(model, "tok_emb.weight").cast<double>(); }

std::string tokenLabel(const InterpretRequest& request, int id) {
  return id >= 0 && id < static_cast<int>(request.labels.size()) ? request.labels[id] : "#" + std::to_string(id);
}

}  // namespace attnlab
