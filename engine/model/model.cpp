#include "model/model.h"

#include <cmath>
#include <stdexcept>

#include "model/attention_layer.h"
#include "model/length_limit.h"
#include "model/ops.h"
#include "model/workspace.h"
#include "positional/positional.h"

namespace attnlab {

struct BlockParams {
  Param *ln1_w, *ln1_b, *ln2_w, *ln2_b;
  Param *fc_w = nullptr, *fc_b = nullptr, *proj_w = nullptr, *proj_b = nullptr;
  std::unique_ptr<AttentionLayer> attn;
};

struct Model::Parts {
  Param* tok_emb = nullptr;
  Param* head = nullptr;  // null when tied to tok_emb
  Param *lnf_w = nullptr, *lnf_b = nullptr;
  std::unique_ptr<PositionalEncoding> positional;
  std::vector<BlockParams> blocks;
};

std::unique_ptr<Workspace> makeWorkspace() { return std::make_unique<Workspace>(); }
const Mat& workspaceLogits(const Workspace& ws) { return ws.logits; }

namespace {
void fillNormal(Param& p, Rng& rng, float stddev) {
  for (Eigen::Index i = 0; i < p.value.size(); ++i) p.value.data()[i] = rng.normal(0.f, stddev);
}
}  // namespace

Model::Model(const ModelConfig& config, uint64_t seed) : Model(config, Uninitialised{}) { initialise(seed); }

Model::Model(const ModelConfig& config, Uninitialised) : config_(config), parts_(std::make_unique<Parts>()) {
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
    b.ln1_w = &params_.add(pre + "ln1.weight", {d}, false);
    b.ln1_b = &params_.add(pre + "ln1.bias", {d}, false);
    b.attn = std::make_unique<AttentionLayer>(c, l, *p.positional, params_);
    if (!c.attention_only) {
      b.ln2_w = &params_.add(pre + "ln2.weight", {d}, false);
      b.ln2_b = &params_.add(pre + "ln2.bias", {d}, false);
      b.fc_w = &params_.add(pre + "mlp.fc.weight", {c.d_ff, d});
      b.fc_b = &params_.add(pre + "mlp.fc.bias", {c.d_ff}, false);
      b.proj_w = &params_.add(pre + "mlp.proj.weight", {d, c.d_ff});
      b.proj_b = &params_.add(pre + "mlp.proj.bias", {d}, false);
    }
    p.blocks.push_back(std::move(b));
  }
  p.lnf_w = &params_.add("ln_f.weight", {d}, false);
  p.lnf_b = &params_.add("ln_f.bias", {d}, false);
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
    b.ln1_w->value.setOnes();
    b.attn->initialise(rng, residualStd);
    if (b.fc_w) {
      b.ln2_w->value.setOnes();
      fillNormal(*b.fc_w, rng, 0.02f);
      fillNormal(*b.proj_w, rng, residualStd);
    }
  }
  p.lnf_w->value.setOnes();
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
  Mat x(B * T, c.d_model);
  for (int i = 0; i < B * T; ++i) x.row(i) = p.tok_emb->value.row(tokens[i]);  // x = E[token]
  if (p.positional->absolute()) p.positional->addToEmbeddings(x, ws.positions.data(), B, T);

  if (trace) {
    trace->tokens.assign(tokens, tokens + T);
    trace->layers.assign(c.n_layers, {});
  }
  double aux = 0;  // auxiliary losses the layers report (retention sparsity)
  for (int l = 0; l < c.n_layers; ++l) {
    const BlockParams& bp = p.blocks[l];
    BlockActs& a = ws.blocks[l];
    a.x = x;
    ops::layerNormForward(a.x, bp.ln1_w->value, bp.ln1_b->value, a.ln1, a.ln1_mean, a.ln1_rstd);
    a.attn.tokens = ws.tokens.data();  // for rotations indexed by token id
    aux += bp.attn->forward(a.ln1, a.x, ws.positions.data(), B, T, a.attn, a.attn_out);
    a.x_mid = a.x + a.attn_out;
    if (bp.fc_w) {
      ops::layerNormForward(a.x_mid, bp.ln2_w->value, bp.ln2_b->value, a.ln2, a.ln2_mean, a.ln2_rstd);
      ops::linearForward(a.ln2, bp.fc_w->value, &bp.fc_b->value, a.fc);
      ops::geluForward(a.fc, a.act);
      ops::linearForward(a.act, bp.proj_w->value, &bp.proj_b->value, a.mlp_out);
      x = a.x_mid + a.mlp_out;
    } else {
      x = a.x_mid;
    }
    if (trace) {
      bp.attn->capture(a.attn, trace->layers[l]);
      trace->layers[l].residual_norm.resize(T);
      for (int t = 0; t < T; ++t) trace->layers[l].residual_norm[t] = a.x.row(t).norm();
    }
  }
  ws.x_final = std::move(x);
  ops::layerNormForward(ws.x_final, p.lnf_w->value, p.lnf_b->value, ws.ln_f, ws.lnf_mean, ws.lnf_rstd);
  ops::linearForward(ws.ln_f, p.head ? p.head->value : p.tok_emb->value, nullptr, ws.logits);
  const double loss = ops::crossEntropyForward(ws.logits, ws.targets.data(), ws.probs, ws.counted);
  ws.cross_entropy = loss;
  if (trace) {
    trace->final_residual_norm.resize(T);
    for (int t = 0; t < T; ++t) trace->final_residual_norm[t] = ws.x_final.row(t).norm();
    trace->logits = ws.logits.topRows(T);
  }
  return loss + aux;
}

void Model::decodeToken(int token, int pos, const DecodeAttention& attention, Mat& logits) const {
  const Parts& p = *parts_;
  const ModelConfig& c = config_;
  if (token < 0 || token >= c.vocab) throw std::invalid_argument("token id " + std::to_string(token) + " is outside the vocabulary");
  if (std::string why = lengthRefusal(c, pos + 1); !why.empty()) throw std::invalid_argument(why);
  Mat x = p.tok_emb->value.row(token);
  if (p.positional->absolute()) p.positional->addToEmbeddings(x, &pos, 1, 1);
  Mat ln, y, mid, hidden, act, mlp;
  Vec mean, rstd;
  for (int l = 0; l < c.n_layers; ++l) {  // the arithmetic of forward() for one row
    const BlockParams& bp = p.blocks[l];
    ops::layerNormForward(x, bp.ln1_w->value, bp.ln1_b->value, ln, mean, rstd);
    attention(l, ln, x, y);
    mid = x + y;
    if (bp.fc_w) {
      ops::layerNormForward(mid, bp.ln2_w->value, bp.ln2_b->value, ln, mean, rstd);
      ops::linearForward(ln, bp.fc_w->value, &bp.fc_b->value, hidden);
      ops::geluForward(hidden, act);
      ops::linearForward(act, bp.proj_w->value, &bp.proj_b->value, mlp);
      x = mid + mlp;
    } else {
      x = mid;
    }
  }
  ops::layerNormForward(x, p.lnf_w->value, p.lnf_b->value, ln, mean, rstd);
  ops::linearForward(ln, p.head ? p.head->value : p.tok_emb->value, nullptr, logits);
}

const AttentionLayer& Model::attentionLayer(int layer) const { return *parts_->blocks.at(layer).attn; }

void Model::backward(Workspace& ws) {
  Parts& p = *parts_;
  const int B = ws.B, T = ws.T;
  Mat dLogits, dx, dLnF;
  ops::crossEntropyBackward(ws.probs, ws.targets.data(), ws.counted, dLogits);
  Param& headW = p.head ? *p.head : *p.tok_emb;
  ops::linearBackward(dLogits, ws.ln_f, headW.value, &dLnF, headW.grad, nullptr);  // from logits = ln_f W^T
  dx.setZero(ws.x_final.rows(), ws.x_final.cols());
  ops::layerNormBackward(dLnF, ws.x_final, p.lnf_w->value, ws.lnf_mean, ws.lnf_rstd, dx, p.lnf_w->grad, p.lnf_b->grad);

  Mat dTmp, dAct, dFc, dLn;
  for (int l = config_.n_layers - 1; l >= 0; --l) {
    BlockParams& bp = p.blocks[l];
    BlockActs& a = ws.blocks[l];
    if (bp.fc_w) {  // x_out = x_mid + proj(gelu(fc(ln2(x_mid)))): dx_mid = dx + (MLP path)
      ops::linearBackward(dx, a.act, bp.proj_w->value, &dAct, bp.proj_w->grad, &bp.proj_b->grad);
      ops::geluBackward(dAct, a.fc, dFc);
      ops::linearBackward(dFc, a.ln2, bp.fc_w->value, &dLn, bp.fc_w->grad, &bp.fc_b->grad);
      ops::layerNormBackward(dLn, a.x_mid, bp.ln2_w->value, a.ln2_mean, a.ln2_rstd, dx, bp.ln2_w->grad, bp.ln2_b->grad);
    }
    // x_mid = x + attn(ln1(x), x): dx = dx_mid + (attention path through ln1, and through presence of x)
    bp.attn->backward(a.ln1, a.x, dx, ws.positions.data(), B, T, a.attn, dLn, dx);
    ops::layerNormBackward(dLn, a.x, bp.ln1_w->value, a.ln1_mean, a.ln1_rstd, dx, bp.ln1_w->grad, bp.ln1_b->grad);
  }
  if (p.positional->absolute()) p.positional->embeddingsBackward(dx, ws.positions.data(), B, T, params_);
  for (int i = 0; i < B * T; ++i) p.tok_emb->grad.row(ws.tokens[i]) += dx.row(i);  // from x = E[token]
}

std::vector<double> Model::layerEntropy(const Workspace& ws) const {
  // Mean over the heads and rows of batch element 0 (a cheap, representative sample).
  std::vector<double> out;
  const int T = ws.T;
  for (const BlockActs& a : ws.blocks) {
    double total = 0;
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

size_t Model::activationBytes(int B, int T) const {
  const ModelConfig& c = config_;
  const size_t tokens = static_cast<size_t>(B) * T;
  const size_t perBlock = tokens * (c.d_model * 6 + c.n_heads * c.headDim() * 6 + (c.attention_only ? 0 : c.d_ff * 2)) +
                          static_cast<size_t>(B) * c.n_heads * T * T * 2;
  return 4 * (perBlock * c.n_layers + tokens * (c.d_model * 2 + c.vocab * 2));
}

std::unique_ptr<Model> copyModel(const Model& model) {
  // Drawing initial weights only to overwrite them would cost more than the copy (the views copy ~10x/s).
  std::unique_ptr<Model> copy(new Model(model.config(), Model::Uninitialised{}));
  const auto& from = model.params().all();
  auto& to = copy->params().all();
  for (size_t i = 0; i < from.size(); ++i) to[i]->value = from[i]->value;  // same config, same order and shapes
  return copy;
}

}  // namespace attnlab
