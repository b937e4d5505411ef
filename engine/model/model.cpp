#include "model/model.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "model/attention_layer.h"
#include "positional/length_limit.h"
#include "model/ops.h"
#include "model/workspace.h"
#include "positional/positional.h"

namespace attnlab {

struct BlockParams {
  Norm ln1, ln2;
  bool hasMlp = false;
  Mlp mlp;
  std::unique_ptr<AttentionLayer> attn;
};

struct Model::Parts {
  Param* tok_emb = nullptr;
  Param* head = nullptr;  // null when tied to tok_emb
  Norm lnf;
  std::unique_ptr<PositionalEncoding> positional;
  std::vector<BlockParams> blocks;
};

std::unique_ptr<Workspace> makeWorkspace() { return std::make_unique<Workspace>(); }
const Mat& workspaceLogits(const Workspace& ws) { return ws.logits; }

namespace {
// What a read-only pass drops once block l has run: everything but the K/V its group's readers read.
void dropBlockActs(const ModelConfig& c, int l, BlockActs& a) {
  BlockActs kept;
  if (l + 1 < c.n_layers && c.kvSourceOf(l + 1) == l) {
    kept.attn.k = std::move(a.attn.k);
    kept.attn.v = std::move(a.attn.v);
  }
  a = std::move(kept);
}

void fillNormal(Param& p, Rng& rng, float stddev) {
  for (Eigen::Index i = 0; i < p.value.size(); ++i) p.value.data()[i] = rng.normal(0.f, stddev);
}
}  // namespace

Model::Model(const ModelConfig& config, uint64_t seed) : Model(config, Uninitialised{}) { initialise(seed); }

Model::Model(const ModelConfig& config, Uninitialised, Allocation allocation) : config_(config), parts_(std::make_unique<Parts>()) {
  params_.setAllocation(allocation);
  const ModelConfig& c = config_;
  if (c.vocab <= 0) throw std::invalid_argument("vocabulary size must be positive");
  if (c.n_heads <= 0 || c.d_model % c.n_heads != 0)
    throw std::invalid_argument("n_heads (" + std::to_string(c.n_heads) + ") must divide d_model (" + std::to_string(c.d_model) + ")");
  if (c.kvHeads() <= 0 || c.n_heads % c.kvHeads() != 0)
    throw std::invalid_argument("n_kv_heads (" + std::to_string(c.kvHeads()) + ") must divide n_heads (" + std::to_string(c.n_heads) + ")");
  if (c.attention.size() != 1 && static_cast<int>(c.attention.size()) != c.n_layers)
    throw std::invalid_argument("model.attention lists " + std::to_string(c.attention.size()) + " variants for " +
                                std::to_string(c.n_layers) + " layers (give one, or one per layer)");
  Parts& p = *parts_;
  p.positional = PositionalRegistry::instance().create(c.positional);
  if (!p.positional)
    throw std::invalid_argument("unknown positional encoding '" + c.positional + "' (known: " + PositionalRegistry::instance().names() + ")");

  const int d = c.d_model;
  p.tok_emb = &params_.add("tok_emb.weight", {c.vocab, d});
  if (std::string why = p.positional->configure(c, params_); !why.empty()) throw std::invalid_argument(why);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string pre = "blocks." + std::to_string(l) + ".";
    BlockParams b;
    b.ln1 = Norm(c, pre + "ln1", params_);
    b.attn = std::make_unique<AttentionLayer>(c, l, *p.positional, params_);
    if (!c.attention_only) {
      b.ln2 = Norm(c, pre + "ln2", params_);
      b.hasMlp = true;
      b.mlp = Mlp(c, pre + "mlp.", params_);
    }
    p.blocks.push_back(std::move(b));
  }
  p.lnf = Norm(c, "ln_f", params_);
  if (!c.tied_embeddings) p.head = &params_.add("head.weight", {c.vocab, d});
}

void Model::initialise(uint64_t seed) {
  const ModelConfig& c = config_;
  Parts& p = *parts_;
  // GPT-2 initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layers), norms at 1.
  Rng rng(seed);
  const float residualStd = 0.02f / std::sqrt(2.0f * c.n_layers);
  fillNormal(*p.tok_emb, rng, 0.02f);
  p.positional->initialise(params_, rng);
  for (auto& b : p.blocks) {
    b.ln1.initialise();
    b.attn->initialise(rng, residualStd);
    if (b.hasMlp) {
      b.ln2.initialise();
      b.mlp.initialise(rng, residualStd);
    }
  }
  p.lnf.initialise();
  if (p.head) fillNormal(*p.head, rng, 0.02f);
}

Model::~Model() = default;

double Model::forward(Workspace& ws, const int* tokens, const int* targets, int B, int T, Trace* trace) const {
  const Parts& p = *parts_;
  const ModelConfig& c = config_;
  if (std::string why = lengthRefusal(c, T); !why.empty()) throw std::invalid_argument(why);
  ws.B = B;
  ws.T = T;
  ws.tokens.assign(tokens, tokens + B * T);
  ws.targets.assign(targets, targets + B * T);
  ws.positions.resize(T);
  for (int t = 0; t < T; ++t) ws.positions[t] = t;
  for (int i = 0; i < B * T; ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab) throw std::invalid_argument("token id " + std::to_string(tokens[i]) + " is outside the vocabulary");

  ws.blocks.resize(c.n_layers);
  // The last pass's logits (103 MB for GPT-2 at 512 tokens) would otherwise sit beside this pass's
  // activations: a read-only pass holds one of the two at a time.
  if (ws.inference) ws.logits = Mat();
  if (ws.first_layer < 0 || ws.first_layer >= c.n_layers || (ws.first_layer > 0 && ws.start_stream.rows() != B * T))
    throw std::invalid_argument("a forward starting at block " + std::to_string(ws.first_layer) + " needs that block's input stream");
  if (c.kvSourceOf(ws.first_layer) != ws.first_layer)  // cross-layer KV: the block reads K/V its group's first block makes
    throw std::invalid_argument("a forward starting at block " + std::to_string(ws.first_layer) + " must start at block " +
                                std::to_string(c.kvSourceOf(ws.first_layer)) + ", whose keys and values it reads");
  Mat x(B * T, c.d_model);
  if (ws.first_layer > 0) {
    x = ws.start_stream;
  } else {
    for (int i = 0; i < B * T; ++i) x.row(i) = p.tok_emb->value.row(tokens[i]);  // x = E[token]
    if (p.positional->absolute()) p.positional->addToEmbeddings(x, ws.positions.data(), B, T);
  }

  if (trace) {
    trace->tokens.assign(tokens, tokens + T);
    trace->layers.assign(c.n_layers, {});
  }
  double aux = 0;  // auxiliary losses the layers report (retention sparsity)
  for (int l = ws.first_layer; l < c.n_layers; ++l) {
    const BlockParams& bp = p.blocks[l];
    BlockActs& a = ws.blocks[l];
    a.x = x;
    hookRows(ws.hooks, HookSite::resid_pre, l, a.x, B, T);
    bp.ln1.forward(a.x, a.ln1, a.ln1_stats);
    a.attn.tokens = ws.tokens.data();  // for rotations indexed by token id
    a.attn.hooks = ws.hooks;
    a.attn.maps_optional = !ws.keep_attention_maps && !trace && !ws.hooks;
    a.attn.kv_source = c.kvSourceOf(l) != l ? &ws.blocks[c.kvSourceOf(l)].attn : nullptr;  // cross-layer KV
    aux += bp.attn->forward(a.ln1, a.x, ws.positions.data(), B, T, a.attn, a.attn_out);
    hookRows(ws.hooks, HookSite::attn_out, l, a.attn_out, B, T);
    a.x_mid = a.x + a.attn_out;
    if (bp.hasMlp) {  // the MLP reads x_mid, or the block input itself with a parallel residual
      hookRows(ws.hooks, HookSite::resid_mid, l, a.x_mid, B, T);
      bp.ln2.forward(c.parallel_residual ? a.x : a.x_mid, a.ln2, a.ln2_stats);
      bp.mlp.hidden(a.ln2, a.mlp);
      hookRows(ws.hooks, HookSite::mlp_hidden, l, a.mlp.act, B, T);
      bp.mlp.down(a.mlp, a.mlp_out);
      hookRows(ws.hooks, HookSite::mlp_out, l, a.mlp_out, B, T);
      x = a.x_mid + a.mlp_out;
    } else {
      x = a.x_mid;
    }
    hookRows(ws.hooks, HookSite::resid_post, l, x, B, T);
    if (trace) {
      bp.attn->capture(a.attn, trace->layers[l]);
      trace->layers[l].residual_norm.resize(T);
      for (int t = 0; t < T; ++t) trace->layers[l].residual_norm[t] = a.x.row(t).norm();
    }
    if (ws.inference) dropBlockActs(c, l, a);
  }
  ws.x_final = std::move(x);
  p.lnf.forward(ws.x_final, ws.ln_f, ws.lnf_stats);
  hookRows(ws.hooks, HookSite::ln_f_out, -1, ws.ln_f, B, T);
  if (ws.last_logits_only) {
    Mat last(B, c.d_model);
    for (int b = 0; b < B; ++b) last.row(b) = ws.ln_f.row(b * T + T - 1);
    ops::linearForward(last, p.head ? p.head->value : p.tok_emb->value, nullptr, ws.logits);
    return 0;
  }
  ops::linearForward(ws.ln_f, p.head ? p.head->value : p.tok_emb->value, nullptr, ws.logits);
  const bool scored = std::any_of(ws.targets.begin(), ws.targets.end(), [](int t) { return t >= 0; });
  double loss = 0;
  if (scored || !ws.inference) {
    loss = ops::crossEntropyForward(ws.logits, ws.targets.data(), ws.probs, ws.counted);
  } else {
    ws.probs = Mat();
    ws.counted = 0;
  }
  ws.cross_entropy = loss;
  if (trace) {
    trace->final_residual_norm.resize(T);
    for (int t = 0; t < T; ++t) trace->final_residual_norm[t] = ws.x_final.row(t).norm();
    trace->logits = ws.logits.topRows(T);
  }
  return loss + aux;
}

void Model::unembed(const Mat& residual, Mat& logits) const {
  const Parts& p = *parts_;
  Mat normed;
  NormActs stats;
  p.lnf.forward(residual, normed, stats);
  ops::linearForward(normed, p.head ? p.head->value : p.tok_emb->value, nullptr, logits);
}

void Model::decodeToken(int token, int pos, const DecodeAttention& attention, Mat& logits) const {
  const Parts& p = *parts_;
  const ModelConfig& c = config_;
  if (token < 0 || token >= c.vocab) throw std::invalid_argument("token id " + std::to_string(token) + " is outside the vocabulary");
  if (std::string why = lengthRefusal(c, pos + 1); !why.empty()) throw std::invalid_argument(why);
  Mat x = p.tok_emb->value.row(token);
  if (p.positional->absolute()) p.positional->addToEmbeddings(x, &pos, 1, 1);
  Mat ln, y, mid, mlp;
  NormActs stats;
  MlpActs mlpActs;
  for (int l = 0; l < c.n_layers; ++l) {  // the arithmetic of forward() for one row
    const BlockParams& bp = p.blocks[l];
    bp.ln1.forward(x, ln, stats);
    attention(l, ln, x, y);
    mid = x + y;
    if (bp.hasMlp) {
      bp.ln2.forward(c.parallel_residual ? x : mid, ln, stats);
      bp.mlp.forward(ln, mlpActs, mlp);
      x = mid + mlp;
    } else {
      x = mid;
    }
  }
  p.lnf.forward(x, ln, stats);
  ops::linearForward(ln, p.head ? p.head->value : p.tok_emb->value, nullptr, logits);
}

const AttentionLayer& Model::attentionLayer(int layer) const { return *parts_->blocks.at(layer).attn; }

void Model::backward(Workspace& ws) {
  params_.ensureGrads();
  Parts& p = *parts_;
  const int B = ws.B, T = ws.T;
  Mat dLogits, dx, dLnF;
  ops::crossEntropyBackward(ws.probs, ws.targets.data(), ws.counted, dLogits);
  Param& headW = p.head ? *p.head : *p.tok_emb;
  ops::linearBackward(dLogits, ws.ln_f, headW.value, &dLnF, headW.grad, nullptr);  // from logits = ln_f W^T
  dx.setZero(ws.x_final.rows(), ws.x_final.cols());
  p.lnf.backward(dLnF, ws.x_final, ws.lnf_stats, dx);

  Mat dLn, dParallel;
  for (int l = config_.n_layers - 1; l >= 0; --l) {
    BlockParams& bp = p.blocks[l];
    BlockActs& a = ws.blocks[l];
    if (bp.hasMlp) {  // x_out = x_mid + mlp(ln2(x_mid)): dx_mid = dx + (MLP path)
      bp.mlp.backward(dx, a.ln2, a.mlp, dLn);
      if (config_.parallel_residual) {  // x_out = x + attn(ln1(x)) + mlp(ln2(x)): the MLP path joins dx below
        dParallel.setZero(dx.rows(), dx.cols());
        bp.ln2.backward(dLn, a.x, a.ln2_stats, dParallel);
      } else {
        bp.ln2.backward(dLn, a.x_mid, a.ln2_stats, dx);
      }
    }
    // x_mid = x + attn(ln1(x), x): dx = dx_mid + (attention path through ln1, and through presence of x)
    bp.attn->backward(a.ln1, a.x, dx, ws.positions.data(), B, T, a.attn, dLn, dx);
    bp.ln1.backward(dLn, a.x, a.ln1_stats, dx);
    if (bp.hasMlp && config_.parallel_residual) dx += dParallel;
  }
  if (ws.keep_embedding_grad) ws.d_embeddings = dx;
  if (p.positional->absolute()) p.positional->embeddingsBackward(dx, ws.positions.data(), B, T, params_);
  for (int i = 0; i < B * T; ++i) p.tok_emb->grad.row(ws.tokens[i]) += dx.row(i);  // from x = E[token]
}

std::vector<double> Model::layerEntropy(const Workspace& ws) const {
  // Mean over the heads and rows of batch element 0 (a cheap, representative sample).
  std::vector<double> out;
  const int T = ws.T;
  for (const BlockActs& a : ws.blocks) {
    double total = 0;
    if (a.attn.attended_without_maps) {  // the rows' entropies the forward kept instead of maps
      for (int r = 0; r < config_.n_heads * T; ++r) total += a.attn.row_entropy[r];
      out.push_back(T ? total / (static_cast<double>(config_.n_heads) * T) : 0.0);
      continue;
    }
    for (int h = 0; h < config_.n_heads; ++h) {
      const float* A = a.attn.weights.data() + static_cast<size_t>(h) * T * T;
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i; ++j) {
          const float w = A[i * T + j];
          if (w > 0) total -= w * std::log(w);
        }
    }
    out.push_back(T ? total / (static_cast<double>(config_.n_heads) * T) : 0.0);
  }
  return out;
}

bool Model::belongsToLayer(const std::string& name, int layer) const {
  const std::string pre = "blocks." + std::to_string(layer) + ".";
  return name.compare(0, pre.size(), pre) == 0;
}

void Model::setHeadGains(const std::vector<std::vector<float>>& gains) {
  if (!gains.empty() && static_cast<int>(gains.size()) != config_.n_layers)
    throw std::invalid_argument("head gains list " + std::to_string(gains.size()) + " layers for " +
                                std::to_string(config_.n_layers));
  for (int l = 0; l < config_.n_layers; ++l) parts_->blocks[l].attn->setHeadGains(gains.empty() ? std::vector<float>{} : gains[l]);
}

std::vector<std::vector<double>> Model::headGainGradients() const {
  std::vector<std::vector<double>> out;
  for (const auto& b : parts_->blocks) out.push_back(b.attn->headGainGradient());
  return out;
}

namespace {
// `withoutMaps`: how many layers keep three row figures [B, H, T] instead of the scores and
// weights [B, H, T, T].
size_t countActivationBytes(const ModelConfig& c, int B, int T, int withoutMaps) {
  // Counted in double: a hostile batch or context (2^31 x 8192) would wrap size_t; the count is
  // exact below 2^53 bytes and saturates above what any machine holds.
  const double tokens = double(B) * T;
  const double perBlock = tokens * (c.d_model * 6.0 + c.n_heads * double(c.headDim()) * 6 +
                                    (c.attention_only ? 0 : c.d_ff * (c.mlp == "swiglu" ? 3.0 : 2.0)));
  const double maps = double(B) * c.n_heads * T * T * 2, rows = tokens * c.n_heads * 3;
  const double bytes = 4 * (perBlock * c.n_layers + maps * (c.n_layers - withoutMaps) + rows * withoutMaps +
                            tokens * (c.d_model * 2.0 + c.vocab * 2.0));
  return bytes < 0x1p64 ? static_cast<size_t>(bytes) : std::numeric_limits<size_t>::max();
}
}  // namespace

size_t Model::activationBytes(int B, int T, ActivationPass pass) const {
  int withoutMaps = 0;
  if (pass == ActivationPass::training)
    for (int l = 0; l < config_.n_layers; ++l) withoutMaps += attentionLayer(l).trainsWithoutMaps();
  return countActivationBytes(config_, B, T, withoutMaps);
}

size_t activationBytes(const ModelConfig& c, int B, int T, ActivationPass pass) {
  if (pass == ActivationPass::reading) return countActivationBytes(c, B, T, 0);
  return Model::shapesOf(c)->activationBytes(B, T, pass);
}

std::unique_ptr<const Model> Model::shapesOf(const ModelConfig& config) {
  return std::unique_ptr<const Model>(new Model(config, Uninitialised{}, Allocation::ShapesOnly));
}

std::unique_ptr<Model> makeBlankModel(const ModelConfig& config) {
  // An opened model is mostly read: gradients come with the first backward.
  std::unique_ptr<Model> model(new Model(config, Model::Uninitialised{}, Allocation::ValuesOnly));
  return model;
}

std::unique_ptr<Model> copyModel(const Model& model) {
  // Drawing initial weights only to overwrite them would cost more than the copy (the views copy ~10x/s).
  std::unique_ptr<Model> copy(new Model(model.config(), Model::Uninitialised{}, Allocation::ValuesOnly));  // views only read it
  const auto& from = model.params().all();
  auto& to = copy->params().all();
  for (size_t i = 0; i < from.size(); ++i) to[i]->value = from[i]->value;  // same config, same order and shapes
  copy->parts_->positional->copyFixedState(*model.parts_->positional);      // e.g. accumulated_rotation's table
  return copy;
}

std::unique_ptr<Model> copyModelAs(const Model& model, const ModelConfig& config) {
  std::unique_ptr<Model> copy(new Model(config, Model::Uninitialised{}));  // a model that trains on
  for (auto& to : copy->params().all())
    if (const Param* from = model.params().find(to->name); from && from->shape == to->shape) to->value = from->value;
  copy->parts_->positional->copyFixedState(*model.parts_->positional);
  return copy;
}

}  // namespace attnlab
