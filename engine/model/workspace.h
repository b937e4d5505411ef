#pragma once
// Activations of one forward pass, kept for its backward. Buffers are reused across steps.
#include <vector>

#include "core/tensor.h"
#include "model/attention_layer.h"
#include "model/block_parts.h"
#include "model/hooks.h"

namespace attnlab {

struct BlockActs {
  Mat x;  // block input (residual stream)
  Mat ln1;
  NormActs ln1_stats;
  AttentionActs attn;
  Mat attn_out;
  Mat x_mid;  // x + attention
  Mat ln2;    // ln2(x_mid), or ln2(x) with a parallel residual
  NormActs ln2_stats;
  MlpActs mlp;
  Mat mlp_out;
};

struct Workspace {
  int B = 0, T = 0;
  std::vector<int> tokens, targets, positions;
  std::vector<BlockActs> blocks;
  Mat x_final, ln_f;
  NormActs lnf_stats;
  Mat logits, probs;
  int counted = 0;
  double cross_entropy = 0;  // the last forward's mean next-token loss, without auxiliary terms
  // No backward follows (a probe trace, a benchmark): forward() drops each block's activations
  // once the next block has its input, and skips the softmax over the vocabulary when no position
  // is scored, so reading a large model needs little beyond its weights and logits.
  bool inference = false;
  // False (the training step) lets attention layers whose variant can attend without T x T maps
  // keep O(T) row figures instead (model/attention_layer.h); a trace or hooks still get the maps.
  bool keep_attention_maps = true;
  ForwardHooks* hooks = nullptr;  // named hook points (model/hooks.h): null, the default, costs nothing
  bool keep_embedding_grad = false;  // backward() then leaves d(loss)/d(resid_pre of block 0) here:
  Mat d_embeddings;                  // [B*T, d_model] (gradient x input attribution reads it)
  // Forward-only shortcuts for activation patching, which runs the same prompt many times: with
  // first_layer L > 0 the pass starts at block L from start_stream (the stream entering block L of
  // an earlier pass of the same tokens), and with last_logits_only the logits are [B, vocab], each
  // batch element's last position, and no loss is computed (forward returns 0).
  int first_layer = 0;
  Mat start_stream;
  bool last_logits_only = false;
};

}  // namespace attnlab
